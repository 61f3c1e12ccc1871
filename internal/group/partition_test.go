package group

import "testing"

// Expected values are Java's String.hashCode (computed independently from
// its documented formula) through Kafka's Utils.abs and % 50.
func TestPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		group string
		hash  int32
		want  int32
	}{
		{"", 0, 0},
		{"abc", 96354, 4},
		{"test-group", 627841412, 12},
		// Negative hashes: Utils.abs is Math.abs, so these land on 12 and 6,
		// where a 0x7fffffff mask would give 36 and 42.
		{"my-group", -1906497762, 12},
		{"groupé", -1237460406, 6},
		// Outside the BMP: two UTF-16 code units.
		{"😀emoji", -1233692477, 27},
		// Integer.MIN_VALUE, which Utils.abs maps to 0.
		{"polygenelubricants", -2147483648, 0},
	} {
		if got := javaStringHashCode(tc.group); got != tc.hash {
			t.Errorf("hashCode(%q) = %d, want %d", tc.group, got, tc.hash)
		}
		if got := PartitionFor(tc.group, 50); got != tc.want {
			t.Errorf("PartitionFor(%q, 50) = %d, want %d", tc.group, got, tc.want)
		}
	}
	if got := PartitionFor("abc", 1); got != 0 {
		t.Errorf("one partition: %d", got)
	}
}
