// Plain data: the renderer reads the bound without loading pdf-lib (archival.ts) for every job.
/**
 * The most of Chromium's PDF held in memory to be made archival or accessible: pdf-lib's objects
 * take about eight times a tagged PDF's size (a 15 MB tagged page of Chromium's: 118 MB of heap),
 * within html-pdf's 512 MB.
 */
export const MAX_ARCHIVAL_BYTES = 40 * 1024 ** 2
