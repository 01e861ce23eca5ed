// Writes the seccomp profile that lets Chromium start its own sandbox in a runner pod: the
// container runtime's default profile (containerd's RuntimeDefault, for a container with every
// capability dropped, as runner pods run) plus the three calls Chromium's namespace sandbox makes
// and that profile refuses to a process without CAP_SYS_ADMIN/CAP_SYS_CHROOT: clone with
// namespace flags (its zygote in new user, PID and network namespaces), unshare (the same, for a
// thread) and chroot (each sandboxed process into an empty directory, inside its user namespace).
// Nothing else changes. The chart ships the output as files/chromium-sandbox-seccomp.json
// (`make seccomp-profile`; a test checks that the file is what this program prints now).
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/containerd/containerd/v2/contrib/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The calls the namespace sandbox needs beyond the default; allowed without argument filters.
var sandboxCalls = []string{"chroot", "clone", "unshare"}

func main() {
	// No capabilities: the profile containerd computes for a runner container (capabilities: drop ALL).
	p := seccomp.DefaultProfile(&specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{}}})
	kept := p.Syscalls[:0]
	for _, rule := range p.Syscalls {
		// The default's clone rule only allows clone without namespace flags: replaced below.
		if len(rule.Names) == 1 && rule.Names[0] == "clone" && rule.Action == specs.ActAllow {
			continue
		}
		for _, name := range rule.Names {
			for _, call := range sandboxCalls {
				if name == call && rule.Action == specs.ActAllow {
					fail("the default profile already allows %s (rule %v): check what this program adds", name, rule)
				}
			}
		}
		kept = append(kept, rule)
	}
	p.Syscalls = append(kept, specs.LinuxSyscall{Names: sandboxCalls, Action: specs.ActAllow})
	out, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		fail("%v", err)
	}
	os.Stdout.Write(append(out, '\n'))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "seccomp-profile: "+format+"\n", args...)
	os.Exit(1)
}
