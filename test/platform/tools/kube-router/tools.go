//go:build tools

// Package tools pins kube-router, the real node's NetworkPolicy enforcer (its firewall only),
// built by test/platform/build-binaries.sh.
package tools

import _ "github.com/cloudnativelabs/kube-router/pkg/cmd"
