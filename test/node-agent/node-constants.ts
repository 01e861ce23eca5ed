// Addresses the agent reports: every pod runs as host processes, so pod IP = host IP = loopback.
export const NODE_IP = '127.0.0.1'
export const POD_IP = NODE_IP
