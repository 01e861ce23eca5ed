// The pod sandbox's pause process, built here because no registry can be reached for
// registry.k8s.io/pause: it holds the pod's namespaces, reaps orphans, and exits on SIGTERM/SIGINT.
module dutil.local/tools/pause

go 1.22
