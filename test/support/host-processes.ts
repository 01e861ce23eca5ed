import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/** A process as this host's /proc shows it (the platforms' pods run on this host). */
export interface HostProcess {
  pid: number
  /** Its command name (`comm`), e.g. `soffice.bin`. */
  command: string
  args: string[]
  /** `R`, `S`, `Z`, ... (the kernel's state letter). */
  state: string
  /** When it started, in clock ticks since boot: with the pid, one process's identity. */
  startTicks: number
  /** Its cgroup paths (`/proc/<pid>/cgroup`): a pod's name `pod<uid>` (cgroupfs) or `kubepods`. */
  cgroup: string
  /** Its namespaces' identities, as the kernel names them (`user:[4026531837]`). */
  userNs: string
  pidNs: string
}

/**
 * The host's processes that `keep` selects, by command name and cgroup (read first, so the rest
 * is read only for those kept). A process that ends during the scan is left out.
 */
export function hostProcesses(keep: (p: { command: string; cgroup: string }) => boolean): HostProcess[] {
  const out: HostProcess[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const command = readFileSync(`/proc/${name}/comm`, 'utf8').trim()
      const cgroup = readFileSync(`/proc/${name}/cgroup`, 'utf8')
      if (!keep({ command, cgroup })) continue
      // After the command's closing parenthesis: state is the first field, starttime the 20th.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.push({
        pid: Number(name),
        command,
        args: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean),
        state: fields[0],
        startTicks: Number(fields[19]),
        cgroup,
        userNs: readlinkSync(`/proc/${name}/ns/user`),
        pidNs: readlinkSync(`/proc/${name}/ns/pid`),
      })
    } catch {
      // ended meanwhile
    }
  }
  return out
}

/** The processes of a pod (cgroupfs names its cgroup `pod<uid>`, the systemd driver `pod<uid with _>`). */
export const hostProcessesOfPod = (uid: string): HostProcess[] =>
  hostProcesses(({ cgroup }) => cgroup.includes(`pod${uid}`) || cgroup.includes(`pod${uid.replaceAll('-', '_')}`))
