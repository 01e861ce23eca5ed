import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // Integration files share one platform; run them one after another.
    fileParallelism: false,
    projects: [
      {
        test: {
          name: 'unit',
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
