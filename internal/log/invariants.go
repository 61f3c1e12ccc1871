package log

import "fmt"

// checkInvariantsLocked panics if the log's structural invariants do not
// hold. It runs only in builds with the invariants tag (CI), after every
// change made under the append lock.
func (l *Log) checkInvariantsLocked() {
	if !invariantsEnabled {
		return
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.mu.closed {
		return
	}
	segs := l.mu.segments
	leo := l.logEndOffset.Load()
	if len(segs) == 0 {
		panic(fmt.Sprintf("log %s: no segments", l.dir))
	}
	for i := 1; i < len(segs); i++ {
		if segs[i-1].baseOffset >= segs[i].baseOffset {
			panic(fmt.Sprintf("log %s: segment bases out of order: %d then %d", l.dir, segs[i-1].baseOffset, segs[i].baseOffset))
		}
	}
	if start := l.mu.logStartOffset; (start < segs[0].baseOffset && !l.mu.config.RemoteStorage) || start < 0 || start > leo {
		panic(fmt.Sprintf("log %s: log start %d outside [%d, %d]", l.dir, start, segs[0].baseOffset, leo))
	}
	if active := segs[len(segs)-1]; active.baseOffset > leo {
		panic(fmt.Sprintf("log %s: active segment base %d above log end %d", l.dir, active.baseOffset, leo))
	}
	if rp := l.recoveryPoint.Load(); rp > leo {
		panic(fmt.Sprintf("log %s: recovery point %d above log end %d", l.dir, rp, leo))
	}
}
