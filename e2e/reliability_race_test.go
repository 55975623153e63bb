//go:build race

package e2e

// raceBuild marks figures from a -race run apart from the plain run's.
func init() { raceBuild = true }
