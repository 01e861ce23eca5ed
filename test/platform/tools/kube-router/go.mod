// Tools module: builds kube-router (the real node's NetworkPolicy enforcer). v1.3.2 is the release
// the module proxy serves here; kept apart so its old client-go does not move the Kubernetes module.
module dutil.local/tools/kube-router

go 1.26

require github.com/cloudnativelabs/kube-router v1.3.2

// As kube-router's own go.mod (CVE-2021-32760).
replace github.com/containerd/containerd => github.com/containerd/containerd v1.5.4
