import { runUtility } from '../common/run-utility.js'
import { handler } from './handler.js'

await runUtility(handler)
