package group

import (
	"math"
	"unicode/utf16"
)

// PartitionFor returns the __consumer_offsets partition that coordinates
// groupID, as Kafka computes it: Utils.abs(groupID.hashCode()) % n.
//
// hashCode is Java's String.hashCode over UTF-16 code units. Kafka's
// Utils.abs is not a bit mask: it is Math.abs except that Integer.MIN_VALUE
// maps to 0 (Math.abs would leave it negative). A mask (h & 0x7fffffff)
// would place every negative-hash group on a different partition than Kafka.
func PartitionFor(groupID string, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return 0
	}
	h := javaStringHashCode(groupID)
	switch {
	case h == math.MinInt32:
		h = 0
	case h < 0:
		h = -h
	}
	return h % numPartitions
}

// javaStringHashCode is java.lang.String.hashCode: s[0]*31^(n-1) + ... +
// s[n-1] over the string's UTF-16 code units, wrapping at 32 bits. Invalid
// UTF-8 bytes count as U+FFFD, as Java's decoder replaces them.
func javaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			high, low := utf16.EncodeRune(r)
			h = 31*h + high
			h = 31*h + low
			continue
		}
		h = 31*h + r
	}
	return h
}
