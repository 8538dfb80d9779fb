package cli

import "redline/internal/host"

// validateIRQPatterns checks doctor's --irq-pattern values the way inspect
// checks its own.
func validateIRQPatterns(patterns []string) error {
	for _, p := range patterns {
		if err := host.ValidateIRQPattern(p); err != nil {
			return err
		}
	}
	return nil
}
