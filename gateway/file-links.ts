// The job view with fresh download links is shared with the operator's callbacks: see contract/.
export { FileLinks } from '../platform/file-links.js'
