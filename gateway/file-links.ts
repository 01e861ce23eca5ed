// The job view with fresh download links is shared with the operator's callbacks: see contract/.
export { FileLinks } from '../contract/file-links.js'
