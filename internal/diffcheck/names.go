package diffcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

func errorCodeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if kafkaErr, ok := err.(*kerr.Error); ok {
			return kafkaErr.Message
		}
	}
	return fmt.Sprintf("code %d", code)
}

func sortStrings(s []string) { slices.Sort(s) }

// limitList joins at most a few names.
func limitList(names []string) string {
	const shown = 6
	if len(names) == 0 {
		return "none"
	}
	if len(names) > shown {
		return strings.Join(names[:shown], ", ") + fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return strings.Join(names, ", ")
}
