// Plain data: the renderer reads the bound without loading pdf-lib (archival.ts) for every job.
/** The most of Chromium's PDF held in memory to be made archival or accessible. */
export const MAX_ARCHIVAL_BYTES = 100 * 1024 ** 2
