//go:build !linux && !darwin

package mirror

// exchange: these systems have no atomic swap of two names Atrium can use;
// replaceFile falls back to moving the old file aside first.
func exchange(a, b string) error { return errNoExchange }
