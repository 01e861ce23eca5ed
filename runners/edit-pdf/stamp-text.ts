/**
 * What a stamp's text may hold: the characters of Windows-1252 (WinAnsi), the encoding of the
 * standard Helvetica every PDF reader has, so the stamp needs no embedded font. One line: no
 * control characters.
 */
export const STAMP_CHARACTERS = /^[\x20-\x7E\u00A0-\u00FF€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ]+$/
