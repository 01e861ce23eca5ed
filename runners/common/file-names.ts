/**
 * An output's file name from its input's (the URL's last path segment): the base name with the
 * output's extension, characters outside a safe set replaced, at most 100 characters; `fallback`
 * when nothing is left.
 */
export function outputFileName(
  inputName: string,
  extension: string,
  fallback: string,
  strip = /\.[a-z0-9]{1,5}$/i,
): string {
  const base = inputName
    .replace(strip, '')
    .replace(/[^\w.\- ]+/g, '_')
    .replace(/^[.\s]+/, '')
    .slice(0, 100)
    .trim()
  return `${base || fallback}.${extension}`
}
