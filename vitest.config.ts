import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // Integration files share one platform; run them one after another.
    fileParallelism: false,
    // Tests start and end worker threads (the runners' split, merge and workbook workers, one of
    // them past its heap limit). Node 20 can abort the whole test process when a worker's isolate
    // goes while V8 still optimizes its code on a background thread (NodePlatform::ForIsolate:
    // "Assertion failed: (data.first) != nullptr"); optimizing on the isolate's own thread leaves
    // no such thread to race.
    poolOptions: { forks: { execArgv: ['--no-concurrent-recompilation'] } },
    projects: [
      {
        test: {
          name: 'unit',
          // No test here asserts how fast it is (benchmarks do): the limit only ends a hung test.
          // make test runs this tier beside the platform tiers on a busy machine, where a
          // CPU-bound test can take several times its usual 2 s.
          testTimeout: 30_000,
          include: [
            'contract/**/*.test.ts',
            'platform/**/*.test.ts',
            'gateway/**/*.test.ts',
            'operator/**/*.test.ts',
            'runners/**/*.test.ts',
            'cli/**/*.test.ts',
            'clients/typescript/src/**/*.test.ts',
            'test/node-agent/**/*.test.ts',
            'test/platform/**/*.test.ts',
            'test/real-node/**/*.test.ts',
            'test/bench/**/*.test.ts',
            'test/*.test.ts',
          ],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/faults/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          // The real-node tier (make test-node): a kubelet with containerd runs the chart's images.
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          globalSetup: ['test/node/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
})
