import { describe, expect, it } from 'vitest'
import { containerdTimes, operatorField, operatorTimes, stageDurations, STAGES } from './job-timeline.js'

const SANDBOX = 'e10b4b06350c5aa470fe0ed572324339d841374c6216545ccb7f409c943a79dd'
const CONTAINER = 'bb37830f567ba23ca53b2cc060f6f4088c5d288b59aaebcc29c5261ef53e4f1a'
const POD = 'job-01m8byt39bzdbkrnrbvmgyb4fj-x4n2n'
// containerd 1.6's own lines for one runner pod (the quotes inside msg are escaped in the log).
const CONTAINERD = [
  `time="2026-11-26T12:55:41.263876681Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:${POD},Uid:2fdd025e,Namespace:dutil,Attempt:0,}"`,
  `time="2026-11-26T12:55:41.389021796Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:${POD},Uid:2fdd025e,Namespace:dutil,Attempt:0,} returns sandbox id \\"${SANDBOX}\\""`,
  `time="2026-11-26T12:55:41.395786252Z" level=info msg="CreateContainer within sandbox \\"${SANDBOX}\\" for container &ContainerMetadata{Name:runner,Attempt:0,}"`,
  `time="2026-11-26T12:55:41.408538460Z" level=info msg="CreateContainer within sandbox \\"${SANDBOX}\\" for &ContainerMetadata{Name:runner,Attempt:0,} returns container id \\"${CONTAINER}\\""`,
  `time="2026-11-26T12:55:41.410000000Z" level=info msg="StartContainer for \\"${CONTAINER}\\""`,
  `time="2026-11-26T12:55:41.480000000Z" level=info msg="StartContainer for \\"${CONTAINER}\\" returns successfully"`,
  `time="2026-11-26T12:55:41.490000000Z" level=info msg="StartContainer for \\"0000\\" returns successfully"`,
].join('\n')

describe('job timeline', () => {
  it("follows a pod's sandbox and its runner container through containerd's log", () => {
    expect(containerdTimes(CONTAINERD).get(POD)).toEqual({
      sandboxAsked: Date.parse('2026-11-26T12:55:41.263Z'),
      sandboxReady: Date.parse('2026-11-26T12:55:41.389Z'),
      containerStarted: Date.parse('2026-11-26T12:55:41.480Z'),
    })
  })

  it("takes the first time each message was logged for each job, from pino's lines behind any prefix", () => {
    const log = [
      '[pod/dutil-operator-1/operator] {"level":30,"time":1000,"jobId":"job_a","msg":"job created"}',
      '{"level":30,"time":1500,"jobId":"job_a","msg":"job created"}',
      '{"level":30,"time":"1970-01-01T00:00:02.000Z","jobId":"job_a","msg":"status written"}',
      '{"level":30,"time":900,"jobId":"job_b","msg":"something else"}',
      'not json {',
    ].join('\n')
    expect(Object.fromEntries(operatorTimes(log, ['job created', 'status written']))).toEqual({
      job_a: { 'job created': 1000, 'status written': 2000 },
    })
  })

  it("reads a numeric field of the operator's first line with a message, per job", () => {
    const log = [
      '{"time":1,"jobId":"job_a","msg":"job created","credentialsMs":12}',
      '{"time":2,"jobId":"job_a","msg":"job created","credentialsMs":99}',
      '{"time":3,"jobId":"job_b","msg":"job created","credentialsMs":"x"}',
      '{"time":4,"jobId":"job_c","msg":"status written","credentialsMs":7}',
    ].join('\n')
    expect(Object.fromEntries(operatorField(log, 'job created', 'credentialsMs'))).toEqual({ job_a: 12 })
  })

  it('measures each stage between its marks, skipping jobs that lack one', () => {
    const stages = stageDurations([
      {
        accepted: 0,
        batchJobCreated: 50,
        sandboxAsked: 300,
        sandboxReady: 420,
        containerStarted: 500,
        runnerStarted: 560,
        runnerDone: 800,
        resultRead: 900,
        succeeded: 920,
      },
      { accepted: 0, runnerStarted: 600, runnerDone: 900, succeeded: 1000 },
    ])
    expect(stages.map(([, ms]) => ms)).toEqual([[50], [250], [120], [80], [60], [240, 300], [100], [20]])
    expect(stages.map(([name]) => name)).toEqual(STAGES.map(([name]) => name))
  })
})
