import pino from 'pino'
import { describe, expect, it, vi } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { Admission, capNow, planAdmissions, smallest, tenantCap, type AdmissionView } from './admission.js'

const view = (name: string, tenant: string, createdAtMs: number, over: Partial<AdmissionView> = {}): AdmissionView => ({
  name,
  utility: 'split-pdf',
  tenant,
  createdAtMs,
  mode: 'async',
  holdsSlot: false,
  cancelRequested: false,
  ...over,
})
const names = (v: AdmissionView[]) => v.map((x) => x.name)
const limit = (n: number) => () => n

describe('smallest', () => {
  it('gives the k smallest in order, as a sort would, ties in their first order', () => {
    const cmp = (a: [number, number], b: [number, number]) => a[0] - b[0]
    let seed = 7
    const rand = () => (seed = (seed * 48271) % 2147483647) % 50
    for (let round = 0; round < 200; round++) {
      const items = Array.from({ length: round % 40 }, (_, i): [number, number] => [rand(), i])
      for (const k of [0, 1, 3, 17, 39, 60]) {
        const sorted = [...items].sort(cmp).slice(0, k)
        expect(smallest(items, k, cmp)).toEqual(sorted)
      }
    }
  })
})

describe('planAdmissions', () => {
  it('admits up to the limit, oldest first, and nothing when the slots are taken', () => {
    const q = [view('a3', 'A', 3), view('a1', 'A', 1), view('a2', 'A', 2)]
    expect(names(planAdmissions(q, limit(2)))).toEqual(['a1', 'a2'])
    expect(
      planAdmissions(
        [view('r1', 'A', 0, { holdsSlot: true }), view('r2', 'B', 0, { holdsSlot: true }), ...q],
        limit(2),
      ),
    ).toEqual([])
  })

  it("gives a tenant with one queued job the next slot, whatever another tenant's backlog", () => {
    const backlog = Array.from({ length: 10_000 }, (_, i) => view(`a${i}`, 'A', i))
    const running = [view('ra1', 'A', -2, { holdsSlot: true }), view('ra2', 'A', -1, { holdsSlot: true })]
    const single = view('b0', 'B', 20_000)
    // Limit 3, two of A's running: the one free slot goes to B, though A's jobs are older.
    expect(names(planAdmissions([...running, ...backlog, single], limit(3)))).toEqual(['b0'])
  })

  it('alternates between tenants with equal load, oldest head first', () => {
    const q = [
      view('a1', 'A', 1),
      view('a2', 'A', 2),
      view('a3', 'A', 3),
      view('b1', 'B', 5),
      view('b2', 'B', 6),
      view('c1', 'C', 4),
    ]
    expect(names(planAdmissions(q, limit(5)))).toEqual(['a1', 'c1', 'b1', 'a2', 'b2'])
  })

  it('holds sync jobs back like the rest, puts them first within their tenant, and skips jobs being cancelled', () => {
    const q = [
      view('s1', 'A', 5, { mode: 'sync' }),
      view('x', 'B', 1, { cancelRequested: true }),
      view('a1', 'A', 2),
      view('b1', 'B', 3),
    ]
    // B's head is older; within A the sync job goes before its older async one.
    expect(names(planAdmissions(q, limit(2)))).toEqual(['b1', 's1'])
    // Every slot taken: a sync job waits too.
    expect(
      planAdmissions([view('r1', 'B', 0, { holdsSlot: true }), view('s2', 'A', 1, { mode: 'sync' })], limit(1)),
    ).toEqual([])
  })

  it('lets a lone tenant use every slot but the reserve, and holds it to its share while another waits', () => {
    // 30 sync jobs of one key against a limit of 8, share 0.5, nobody else waiting: 7 run, one slot stays in reserve.
    const hog = Array.from({ length: 30 }, (_, i) => view(`h${i}`, 'A', i, { mode: 'sync' }))
    expect(names(planAdmissions(hog, limit(8), new Map(), 0.5))).toEqual(['h0', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'])
    // With its 7 running (slow jobs), another key's job takes the reserve at once.
    const running = hog.slice(0, 7).map((v) => ({ ...v, holdsSlot: true }))
    expect(
      names(planAdmissions([...running, ...hog.slice(7), view('b0', 'B', 100)], limit(8), new Map(), 0.5)),
    ).toEqual(['b0'])
    // While B waits, A (over its share of 4) gets none of the slots its finished jobs free: B does.
    const b = [view('b0', 'B', 100, { holdsSlot: true }), view('b1', 'B', 101), view('b2', 'B', 102)]
    const fewer = running.slice(0, 5)
    expect(names(planAdmissions([...fewer, ...hog.slice(7), ...b], limit(8), new Map(), 0.5))).toEqual(['b1', 'b2'])
    // Both under their shares: the fewest running goes first, each up to its share.
    const three = running.slice(0, 3)
    expect(names(planAdmissions([...three, ...hog.slice(7), ...b], limit(8), new Map(), 0.5))).toEqual([
      'b1',
      'b2',
      'h7',
    ])
    // Share 1: one key may take every slot.
    expect(planAdmissions(hog, limit(8), new Map(), 1)).toHaveLength(8)
  })

  it('keeps no reserve from a lone tenant of a one-slot utility', () => {
    expect([capNow(1, 0.5, false), capNow(2, 0.5, false), capNow(8, 0.5, false), capNow(8, 0.5, true)]).toEqual([
      1, 1, 7, 4,
    ])
  })

  it('caps a tenant at its share rounded down, at least one slot', () => {
    expect([
      tenantCap(8, 0.5),
      tenantCap(4, 0.5),
      tenantCap(3, 0.5),
      tenantCap(1, 0.5),
      tenantCap(8, 1),
      tenantCap(10, 0.3),
    ]).toEqual([4, 2, 1, 1, 8, 3])
  })

  it("admits nothing more of a utility while one of its jobs' pods waits for a node with room", () => {
    const q = [
      view('r1', 'A', 0, { holdsSlot: true, waitingForNode: true }),
      view('b1', 'B', 1),
      view('h1', 'C', 2, { utility: 'html-pdf' }),
    ]
    // Four slots, one taken: still none for split-pdf; html-pdf is not held back.
    expect(names(planAdmissions(q, limit(4)))).toEqual(['h1'])
    // Placed: the free slots go out again.
    q[0] = view('r1', 'A', 0, { holdsSlot: true })
    expect(names(planAdmissions(q, limit(4)))).toEqual(['b1', 'h1'])
  })

  it('keeps utilities apart', () => {
    const q = [
      view('p1', 'A', 1),
      view('h1', 'A', 2, { utility: 'html-pdf' }),
      view('h2', 'A', 3, { utility: 'html-pdf' }),
    ]
    expect(names(planAdmissions(q, (u) => (u === 'html-pdf' ? 1 : 8))).sort()).toEqual(['h1', 'p1'])
  })
})

describe('Admission', () => {
  const uj = (
    name: string,
    tenant: string,
    at: number,
    over: Partial<UtilityJobResource['spec']> = {},
    state?: 'queued' | 'running' | 'succeeded',
  ): UtilityJobResource => ({
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name },
    spec: {
      jobId: `job_${name}`,
      utility: 'split-pdf',
      mode: 'async',
      apiKeyId: tenant,
      apiKeyName: tenant,
      createdAt: new Date(at).toISOString(),
      inputKey: 'i',
      metadata: null,
      ...over,
    },
    ...(state
      ? {
          status: {
            state,
            startedAt: null,
            finishedAt: null,
            timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null },
            result: null,
            error: null,
          },
        }
      : {}),
  })

  it('tells whether a utility has jobs left waiting for a slot after its last pass', () => {
    const jobs = [uj('a1', 'A', 1), uj('a2', 'A', 2)]
    const admission = new Admission({
      limitOf: limit(1),
      list: () => jobs,
      hasJob: () => false,
      enqueue: () => {},
      log: pino({ level: 'silent' }),
    })
    expect(admission.hasWaiting('split-pdf')).toBe(false)
    admission.pass()
    expect(admission.hasWaiting('split-pdf')).toBe(true)
    expect(admission.hasWaiting('html-pdf')).toBe(false)
    jobs[0] = uj('a1', 'A', 1, {}, 'succeeded')
    admission.pass()
    expect(admission.hasWaiting('split-pdf')).toBe(false)
  })

  it('never gives a slot twice before the watch shows the Job, and frees it when the job finishes', () => {
    const jobs = [uj('a1', 'A', 1), uj('a2', 'A', 2), uj('b1', 'B', 3)]
    const withJob = new Set<string>()
    const enqueued: string[] = []
    const admission = new Admission({
      limitOf: limit(1),
      list: () => jobs,
      hasJob: (j) => withJob.has(j.metadata.name),
      enqueue: (n) => enqueued.push(n),
      log: pino({ level: 'silent' }),
    })
    expect(admission.mayStart(jobs[0])).toBe(false)
    expect(names(admission.pass())).toEqual(['a1'])
    expect(admission.mayStart(jobs[0])).toBe(true)
    // Passes before the Job shows up admit nobody else.
    expect(admission.pass()).toEqual([])
    withJob.add('a1')
    expect(admission.pass()).toEqual([])
    // a1 finishes: neither tenant runs anything; B was never served, so its one job goes before
    // A's second (and before A's third, though that one is the oldest of all).
    jobs.push(uj('a3', 'A', 0))
    jobs[0] = uj('a1', 'A', 1, {}, 'succeeded')
    expect(names(admission.pass())).toEqual(['b1'])
    // b1 finishes: A's turn again, its oldest first.
    withJob.add('b1')
    jobs[2] = uj('b1', 'B', 3, {}, 'succeeded')
    expect(names(admission.pass())).toEqual(['a3'])
    expect(enqueued).toEqual(['a1', 'b1', 'a3'])
    expect(admission.mayStart(jobs[1])).toBe(false)
    expect(admission.mayStart(uj('s', 'A', 9, { mode: 'sync' }))).toBe(false)
  })

  it("counts shares per owner: one person's two keys and playground take one share, another owner the other", () => {
    const ana = { owner: 'owner:ana@example.com' }
    const jobs = [
      ...[1, 2, 3].map((i) => uj(`k1-${i}`, 'key_1', i, ana)),
      ...[4, 5, 6].map((i) => uj(`k2-${i}`, 'key_2', i, ana)),
      ...[7, 8].map((i) =>
        uj(`pg-${i}`, '', i, { source: 'playground', userEmail: 'ana@example.com', owner: 'owner:ana@example.com' }),
      ),
      ...[9, 10, 11].map((i) => uj(`b-${i}`, 'key_3', i)),
    ]
    const admission = new Admission({
      limitOf: limit(4),
      share: 0.5,
      list: () => jobs,
      hasJob: () => false,
      enqueue: () => {},
      log: pino({ level: 'silent' }),
    })
    const admitted = names(admission.pass())
    expect(admitted.filter((n) => !n.startsWith('b-'))).toHaveLength(2)
    expect(admitted.filter((n) => n.startsWith('b-'))).toEqual(['b-9', 'b-10'])
  })

  it("never admits a revoked key's queued jobs", () => {
    const jobs = [uj('r1', 'key_r', 1), uj('r2', 'key_r', 2), uj('o1', 'key_o', 3)]
    const admission = new Admission({
      limitOf: limit(4),
      keyRevoked: (id) => id === 'key_r',
      list: () => jobs,
      hasJob: () => false,
      enqueue: () => {},
      log: pino({ level: 'silent' }),
    })
    expect(names(admission.pass())).toEqual(['o1'])
  })

  it('reads a job anew when the watch replaces its object, and a key revoked since the last pass', () => {
    const jobs = [uj('h1', 'key_h', 0), uj('r1', 'key_r', 1), uj('o1', 'key_o', 2)]
    const revoked = new Set<string>()
    const admission = new Admission({
      limitOf: limit(1),
      keyRevoked: (id) => revoked.has(id),
      list: () => jobs,
      hasJob: (j) => j.metadata.name === 'h1',
      enqueue: () => {},
      log: pino({ level: 'silent' }),
    })
    expect(admission.pass()).toEqual([])
    // r1's key is revoked and o1 is cancelled (a new object): h1 ends, and neither takes its slot.
    revoked.add('key_r')
    jobs[2] = uj('o1', 'key_o', 2, { cancelRequested: true })
    jobs.shift()
    expect(admission.pass()).toEqual([])
    // A new job of another key takes it.
    jobs.push(uj('n1', 'key_n', 3))
    expect(names(admission.pass())).toEqual(['n1'])
  })

  it('keeps the slot of a job that finished from its stored result until its pod shows the runner exited', () => {
    const jobs = [uj('a1', 'A', 1), uj('b1', 'B', 2)]
    const working = new Set<string>()
    const admission = new Admission({
      limitOf: limit(1),
      list: () => jobs,
      hasJob: (j) => j.metadata.name === 'a1',
      runnerWorking: (j) => working.has(j.metadata.name),
      enqueue: () => {},
      log: pino({ level: 'silent' }),
    })
    expect(admission.pass()).toEqual([])
    // a1 succeeds early; the kubelet still shows its runner at work.
    working.add('a1')
    admission.finishedEarly('a1')
    jobs[0] = uj('a1', 'A', 1, {}, 'succeeded')
    expect(admission.pass()).toEqual([])
    expect(admission.isFinishing('a1')).toBe(true)
    // Its exit is reported: the slot goes to b1, and a1 is forgotten.
    working.delete('a1')
    expect(names(admission.pass())).toEqual(['b1'])
    expect(admission.isFinishing('a1')).toBe(false)
  })

  it("holds a utility's admissions while a runner pod waits for a node, and remembers whose pod it was", () => {
    const jobs = [uj('a1', 'A', 1), uj('b1', 'B', 2)]
    const unplaced = new Set(['a1'])
    const lines: string[] = []
    const admission = new Admission({
      limitOf: limit(2),
      list: () => jobs,
      hasJob: (j) => j.metadata.name === 'a1',
      waitingForNode: () => unplaced,
      enqueue: () => {},
      log: pino({}, { write: (line: string) => lines.push(line) }),
    })
    expect(admission.pass()).toEqual([])
    expect(admission.pass()).toEqual([])
    // Said once, when the hold begins, with the utility and the job whose pod waits.
    const held = lines.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg.startsWith('admission held'))
    expect(held).toEqual([expect.objectContaining({ waiting: ['a1'], utilities: ['split-pdf'] })])
    expect(admission.heldBackBy('a1')).toBe(true)
    expect(admission.heldBackBy('b1')).toBe(false)
    unplaced.delete('a1')
    expect(names(admission.pass())).toEqual(['b1'])
    expect(admission.heldBackBy('a1')).toBe(false)
  })

  /**
   * Scheduled passes under fake timers (a debounce of 20 ms; each pass takes `passMs` of the fake
   * clock): `body` gets the admission and the number of passes run so far.
   */
  async function scheduledPasses(
    passMs: number,
    body: (admission: Admission, passes: () => number) => Promise<void>,
  ): Promise<void> {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] })
    try {
      let passes = 0
      const admission = new Admission({
        limitOf: limit(1),
        list: () => (passes++, vi.advanceTimersByTime(passMs), []),
        hasJob: () => false,
        enqueue: () => {},
        log: pino({ level: 'silent' }),
        debounceMs: 20,
      })
      await body(admission, () => passes)
    } finally {
      vi.useRealTimers()
    }
  }

  it('runs a pass at once when none ran lately, and gathers the asks that follow into one pass after the debounce', () =>
    scheduledPasses(0, async (admission, passes) => {
      admission.schedule()
      await vi.advanceTimersByTimeAsync(0)
      expect(passes()).toBe(1)
      admission.schedule()
      admission.schedule()
      await vi.advanceTimersByTimeAsync(10)
      expect(passes()).toBe(1)
      await vi.advanceTimersByTimeAsync(10)
      expect(passes()).toBe(2)
    }))

  it("spaces passes by ten times the last one's cost when a pass is slower than the debounce", () =>
    // A pass over a deep queue: 8 ms.
    scheduledPasses(8, async (admission, passes) => {
      admission.schedule()
      await vi.advanceTimersByTimeAsync(0)
      expect(passes()).toBe(1)
      // The next may start 80 ms after the last one started, not 20.
      admission.schedule()
      await vi.advanceTimersByTimeAsync(60)
      expect(passes()).toBe(1)
      await vi.advanceTimersByTimeAsync(20)
      expect(passes()).toBe(2)
    }))

  it('frees the slot of a finished job at once when it did not finish early', () => {
    const jobs = [uj('a1', 'A', 1, {}, 'succeeded'), uj('b1', 'B', 2)]
    const admission = new Admission({
      limitOf: limit(1),
      list: () => jobs,
      hasJob: () => false,
      runnerWorking: () => true,
      enqueue: () => {},
      log: pino({ level: 'silent' }),
    })
    expect(names(admission.pass())).toEqual(['b1'])
  })

  it('holds a sync job back when no slot is free, hands it to the reconciler once to show it queued, then admits it', () => {
    const jobs = [uj('a1', 'A', 1), uj('s1', 'B', 2, { mode: 'sync' })]
    const withJob = new Set<string>()
    const enqueued: string[] = []
    const admission = new Admission({
      limitOf: limit(1),
      list: () => jobs,
      hasJob: (j) => withJob.has(j.metadata.name),
      enqueue: (n) => enqueued.push(n),
      log: pino({ level: 'silent' }),
    })
    expect(names(admission.pass())).toEqual(['a1'])
    expect(admission.wasHeld('s1')).toBe(true)
    expect(admission.pass()).toEqual([])
    expect(enqueued).toEqual(['s1', 'a1'])
    withJob.add('a1')
    jobs[0] = uj('a1', 'A', 1, {}, 'succeeded')
    expect(names(admission.pass())).toEqual(['s1'])
    expect(admission.mayStart(jobs[1])).toBe(true)
  })
})
