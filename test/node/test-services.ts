/**
 * The real-node tests' own pods, in namespace dutil-test: `test-services` serves input files over
 * http and receives callbacks over https (certificate from the tests' CA, which the chart's
 * trustedCaBundle makes the operator trust); `np-target` is a plain http server behind a Service
 * of its own, something a runner must not reach. Both run the gateway image's Node with a small
 * script: no image is pulled.
 */
export const TEST_NS = 'dutil-test'
export const SERVICES_HOST = `test-services.${TEST_NS}.svc.cluster.local`

/** The servers' script: PUT/GET /files/<name>, POST /callbacks/<anything>, GET /received, GET /stall (never answers). */
const SERVER_JS = `
const http = require('node:http')
const https = require('node:https')
const fs = require('node:fs')
const files = new Map()
const received = []
function handle(req, res) {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    const path = req.url.split('?')[0]
    if (req.method === 'PUT' && path.startsWith('/files/')) {
      files.set(path.slice(7), body)
      res.statusCode = 201
      return res.end()
    }
    if (req.method === 'GET' && path.startsWith('/files/')) {
      const f = files.get(path.slice(7))
      if (!f) { res.statusCode = 404; return res.end() }
      res.setHeader('content-type', path.endsWith('.html') ? 'text/html' : 'application/octet-stream')
      return res.end(f)
    }
    if (req.method === 'POST' && path.startsWith('/callbacks/')) {
      received.push({ path, headers: req.headers, body: body.toString('utf8') })
      res.statusCode = 204
      return res.end()
    }
    if (req.method === 'GET' && path === '/received') {
      res.setHeader('content-type', 'application/json')
      return res.end(JSON.stringify(received))
    }
    if (path === '/stall') return
    res.statusCode = path === '/' ? 200 : 404
    res.end(process.env.NAME || '')
  })
}
http.createServer(handle).listen(8080)
if (fs.existsSync('/tls/tls.crt')) https.createServer({ cert: fs.readFileSync('/tls/tls.crt'), key: fs.readFileSync('/tls/tls.key') }, handle).listen(8443)
`

function serverPod(name: string, image: string, withTls: boolean): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: TEST_NS, labels: { app: name } },
    spec: {
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 10001 },
      containers: [
        {
          name: 'server',
          image,
          imagePullPolicy: 'Never',
          command: ['node', '/srv/server.js'],
          env: [{ name: 'NAME', value: name }],
          ports: [{ containerPort: 8080 }, ...(withTls ? [{ containerPort: 8443 }] : [])],
          readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [
            { name: 'script', mountPath: '/srv', readOnly: true },
            ...(withTls ? [{ name: 'tls', mountPath: '/tls', readOnly: true }] : []),
          ],
        },
      ],
      volumes: [
        { name: 'script', configMap: { name: 'test-server' } },
        ...(withTls ? [{ name: 'tls', secret: { secretName: 'test-services-tls' } }] : []),
      ],
    },
  }
}

function service(name: string, ports: Array<{ name: string; port: number; targetPort: number }>): object {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: TEST_NS },
    spec: { selector: { app: name }, ports },
  }
}

/** Everything of dutil-test, as a kubectl apply list. */
export function testServicesManifest(o: { image: string; tlsCert: string; tlsKey: string }): string {
  const items = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: TEST_NS } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'test-server', namespace: TEST_NS },
      data: { 'server.js': SERVER_JS },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'test-services-tls', namespace: TEST_NS },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': o.tlsCert, 'tls.key': o.tlsKey },
    },
    serverPod('test-services', o.image, true),
    service('test-services', [
      { name: 'http', port: 80, targetPort: 8080 },
      { name: 'https', port: 443, targetPort: 8443 },
    ]),
    serverPod('np-target', o.image, false),
    service('np-target', [{ name: 'http', port: 80, targetPort: 8080 }]),
  ]
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items })
}
