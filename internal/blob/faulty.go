package blob

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Op names a bucket operation a Fault can match. Ops are bits, so one Fault
// can match several.
type Op uint32

const (
	OpPut    Op = 1 << iota // Put
	OpGet                   // Get, GetRange
	OpSize                  // Size
	OpList                  // List
	OpDelete                // Delete

	// OpAny matches every operation.
	OpAny Op = 1<<iota - 1
)

// ErrSlowDown is the injected form of S3's 503 SlowDown: transient.
var ErrSlowDown = fmt.Errorf("503 SlowDown: please reduce your request rate: %w", ErrTransient)

// Fault describes a failure to inject.
type Fault struct {
	// Ops selects the operations the fault applies to.
	Ops Op
	// KeyContains restricts the fault to keys (or list prefixes) containing
	// this string; empty matches every key.
	KeyContains string
	// Err is returned by a matching operation, after the operation reached
	// the inner bucket when AfterInner is set (a Put that landed but whose
	// answer was lost), before it otherwise.
	Err        error
	AfterInner bool
	// TruncateBytes, for reads, cuts the body to this many bytes and
	// returns ErrTruncated, as a connection dropped mid-body does.
	TruncateBytes int
	Truncate      bool
	// Latency delays a matching operation (or until its context is done).
	Latency time.Duration
	// Skip lets the first Skip matching operations through untouched.
	Skip int
	// Times is how many times the fault fires before it retires; 0 means
	// forever.
	Times int
}

// Faulty wraps a Bucket and injects Faults; Down makes every operation fail
// as an unreachable endpoint does. It is safe for concurrent use.
type Faulty struct {
	inner Bucket

	mu struct {
		sync.Mutex
		faults   []*activeFault
		down     bool
		injected int
		calls    map[Op]int
	}
}

type activeFault struct {
	Fault
	seen  int
	fired int
}

// ErrUnreachable is what operations of a Faulty that is Down return.
var ErrUnreachable = fmt.Errorf("dial tcp: connect: connection refused: %w", ErrTransient)

// NewFaulty wraps inner.
func NewFaulty(inner Bucket) *Faulty {
	f := &Faulty{inner: inner}
	f.mu.calls = make(map[Op]int)
	return f
}

// Inject adds a fault.
func (f *Faulty) Inject(fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.faults = append(f.mu.faults, &activeFault{Fault: fault})
}

// Clear removes every fault and brings the bucket back up.
func (f *Faulty) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.faults = nil
	f.mu.down = false
}

// SetDown makes the store unreachable (true) or reachable again.
func (f *Faulty) SetDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.down = down
}

// Injected returns how many operations a fault or Down has failed.
func (f *Faulty) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.injected
}

// Calls returns how many operations of kind op reached the wrapper.
func (f *Faulty) Calls(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.calls[op]
}

// check returns the fault that fires for this call, or nil.
func (f *Faulty) check(op Op, key string) (*Fault, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.calls[op]++
	if f.mu.down {
		f.mu.injected++
		return nil, fmt.Errorf("blob: %s: %w", key, ErrUnreachable)
	}
	for _, a := range f.mu.faults {
		if a.Ops&op == 0 || !strings.Contains(key, a.KeyContains) {
			continue
		}
		if a.Times > 0 && a.fired >= a.Times {
			continue
		}
		a.seen++
		if a.seen <= a.Skip {
			continue
		}
		a.fired++
		f.mu.injected++
		fault := a.Fault
		return &fault, nil
	}
	return nil, nil
}

// around runs inner under the fault for (op, key), if any.
func (f *Faulty) around(ctx context.Context, op Op, key string, inner func() error) error {
	fault, err := f.check(op, key)
	if err != nil {
		return err
	}
	if fault == nil {
		return inner()
	}
	if fault.Latency > 0 {
		if err := sleepContext(ctx, fault.Latency); err != nil {
			return err
		}
	}
	if fault.Err != nil && !fault.AfterInner {
		return fault.Err
	}
	if err := inner(); err != nil {
		return err
	}
	return fault.Err
}

func (f *Faulty) Put(ctx context.Context, key string, body []byte) error {
	return f.around(ctx, OpPut, key, func() error { return f.inner.Put(ctx, key, body) })
}

func (f *Faulty) PutSection(ctx context.Context, key string, r io.ReaderAt, size int64) error {
	return f.around(ctx, OpPut, key, func() error { return f.inner.PutSection(ctx, key, r, size) })
}

func (f *Faulty) Get(ctx context.Context, key string) ([]byte, error) {
	return f.GetRange(ctx, key, 0, -1)
}

func (f *Faulty) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	fault, err := f.check(OpGet, key)
	if err != nil {
		return nil, err
	}
	if fault != nil && fault.Latency > 0 {
		if err := sleepContext(ctx, fault.Latency); err != nil {
			return nil, err
		}
	}
	if fault != nil && fault.Err != nil && !fault.AfterInner {
		return nil, fault.Err
	}
	body, err := f.inner.GetRange(ctx, key, offset, length)
	if err != nil {
		return nil, err
	}
	if fault != nil && fault.Truncate && fault.TruncateBytes < len(body) {
		return nil, fmt.Errorf("blob: get %s: %d of %d bytes: %w", key, fault.TruncateBytes, len(body), ErrTruncated)
	}
	if fault != nil && fault.Err != nil {
		return nil, fault.Err
	}
	return body, nil
}

func (f *Faulty) Size(ctx context.Context, key string) (int64, error) {
	var size int64
	err := f.around(ctx, OpSize, key, func() (err error) { size, err = f.inner.Size(ctx, key); return err })
	return size, err
}

func (f *Faulty) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	return f.around(ctx, OpList, prefix, func() error { return f.inner.List(ctx, prefix, fn) })
}

func (f *Faulty) Delete(ctx context.Context, key string) error {
	return f.around(ctx, OpDelete, key, func() error { return f.inner.Delete(ctx, key) })
}

func (f *Faulty) Close() error { return f.inner.Close() }
