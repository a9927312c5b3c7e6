// Package secrets says which environment values are secrets — by the name
// of the variable, with the same rule the window uses to mask them — and
// masks them in what Shepherd prints and answers (the CLI, the API), unless
// the one who needs them asks (--show-secrets, ?reveal=true).
package secrets

import (
	"regexp"

	"shepherd/backend/store"
)

// Masked stands for a secret value in output. Sent back in an edit it means
// "unchanged": the engine keeps the value it has.
const Masked = "••••••••"

var secretName = regexp.MustCompile(`(?i)(secret|token|key|passw|pwd|credential|auth|cookie|session)`)

// IsSecret reports whether an environment variable's value is a secret,
// by its name (ANTHROPIC_API_KEY, GITHUB_TOKEN, DB_PASSWORD, …).
func IsSecret(name string) bool { return secretName.MatchString(name) }

// MaskEnv returns env with the values of secret names masked (a new map;
// nil stays nil).
func MaskEnv(env map[string]string) map[string]string {
	if env == nil {
		return nil
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		if IsSecret(k) && v != "" {
			v = Masked
		}
		out[k] = v
	}
	return out
}

// MaskRecord returns r with its secret environment values masked (a copy
// when anything is masked; r itself otherwise).
func MaskRecord(r *store.Record) *store.Record {
	if r == nil || len(r.Env) == 0 {
		return r
	}
	for k, v := range r.Env {
		if IsSecret(k) && v != "" {
			c := r.Clone()
			c.Env = MaskEnv(r.Env)
			return c
		}
	}
	return r
}

// Unmask puts back the current value of every variable an edit sent as
// Masked: a masked value means "unchanged".
func Unmask(edited, current map[string]string) map[string]string {
	if edited == nil {
		return nil
	}
	for k, v := range edited {
		if v == Masked {
			if cur, ok := current[k]; ok {
				edited[k] = cur
			}
		}
	}
	return edited
}
