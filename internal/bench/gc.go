package bench

import (
	"os"
	"runtime/debug"
)

// LoadGeneratorGCPercent is the GOGC a load generator runs with unless the
// GOGC environment variable says otherwise. franz-go allocates a few
// hundred bytes per record while the live heap of a producer or consumer
// stays at a few MB, so at Go's default of 100 the collector runs dozens of
// times a second; on a small machine its mark phase then shows up as
// latency tail that belongs to the client, not the broker measured. 400
// keeps the heap small (tens of MB) and the collections rare, as a tuned
// Kafka client's JVM heap would.
const LoadGeneratorGCPercent = 400

// TuneGC sets LoadGeneratorGCPercent for this process unless GOGC is set.
// Call it once in a process that only generates load.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(LoadGeneratorGCPercent)
	}
}
