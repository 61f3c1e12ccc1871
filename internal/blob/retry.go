package blob

import (
	"context"
	"io"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds the retries of transient errors.
type RetryPolicy struct {
	// Attempts is the most tries of one operation, the first included.
	Attempts int
	// BackoffMs is the wait before the first retry; it doubles each retry
	// up to BackoffMaxMs. Each wait is drawn uniformly from [wait/2, wait]
	// (jitter), so many partitions retrying do not hit the store in step.
	BackoffMs    int64
	BackoffMaxMs int64
	// Sleep waits for d or until ctx is done; nil uses a timer. Tests pass
	// a function that records the waits instead of sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultRetryPolicy is Samsa's: 5 tries, 100 ms doubling to 5 s, on top of
// the retries the cloud SDKs already make within one try. Kafka leaves
// retries to the RemoteStorageManager plugin and to the next run of
// remote.log.manager.task.interval.ms; the tier manager likewise tries again
// on its next task when these are spent.
var DefaultRetryPolicy = RetryPolicy{Attempts: 5, BackoffMs: 100, BackoffMaxMs: 5000}

// Retrying wraps inner so that each operation is retried under policy while
// it fails with a transient error.
func Retrying(inner Bucket, policy RetryPolicy) Bucket {
	if policy.Attempts < 1 {
		policy.Attempts = 1
	}
	if policy.Sleep == nil {
		policy.Sleep = sleepContext
	}
	return &retryBucket{inner: inner, policy: policy}
}

type retryBucket struct {
	inner  Bucket
	policy RetryPolicy
}

func sleepContext(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// do runs op until it succeeds, fails permanently, or runs out of tries.
func (r *retryBucket) do(ctx context.Context, op func() error) error {
	waitMs := r.policy.BackoffMs
	var err error
	for attempt := 1; ; attempt++ {
		err = op()
		if err == nil || !IsTransient(err) || attempt >= r.policy.Attempts {
			return err
		}
		jittered := waitMs/2 + rand.Int64N(waitMs/2+1)
		if sleepErr := r.policy.Sleep(ctx, time.Duration(jittered)*time.Millisecond); sleepErr != nil {
			return err
		}
		waitMs = min(waitMs*2, r.policy.BackoffMaxMs)
	}
}

func (r *retryBucket) Put(ctx context.Context, key string, body []byte) error {
	return r.do(ctx, func() error { return r.inner.Put(ctx, key, body) })
}

func (r *retryBucket) PutSection(ctx context.Context, key string, source io.ReaderAt, size int64) error {
	return r.do(ctx, func() error { return r.inner.PutSection(ctx, key, source, size) })
}

func (r *retryBucket) Get(ctx context.Context, key string) ([]byte, error) {
	var body []byte
	err := r.do(ctx, func() (err error) { body, err = r.inner.Get(ctx, key); return err })
	return body, err
}

func (r *retryBucket) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	var body []byte
	err := r.do(ctx, func() (err error) { body, err = r.inner.GetRange(ctx, key, offset, length); return err })
	return body, err
}

func (r *retryBucket) Size(ctx context.Context, key string) (int64, error) {
	var size int64
	err := r.do(ctx, func() (err error) { size, err = r.inner.Size(ctx, key); return err })
	return size, err
}

// List is retried only while fn has seen nothing, so fn never sees an
// object twice.
func (r *retryBucket) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	seen := false
	return r.do(ctx, func() error {
		err := r.inner.List(ctx, prefix, func(o ObjectInfo) error { seen = true; return fn(o) })
		if err != nil && seen {
			return permanent{err}
		}
		return err
	})
}

func (r *retryBucket) Delete(ctx context.Context, key string) error {
	return r.do(ctx, func() error { return r.inner.Delete(ctx, key) })
}

func (r *retryBucket) Close() error { return r.inner.Close() }

// permanent hides an error's transience from the retry loop.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
