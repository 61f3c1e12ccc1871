// Package blob is Samsa's object-store seam: every byte tiered storage puts
// in or reads from a bucket goes through a Bucket, so tests can swap the
// store for an in-memory one, a local directory, a real S3-compatible server,
// or a fault-injecting wrapper, as internal/vfs does for files.
//
// A bucket is named by a URL, opened by gocloud.dev/blob:
//
//	file:///var/lib/samsa/bucket     a local directory (the default for tests)
//	mem://                           process memory (unit tests only)
//	s3://my-bucket?region=us-east-1  Amazon S3, or any S3-compatible service
//	s3://my-bucket?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1
//
// s3:// takes the AWS SDK's standard credential chain (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared files, instance and
// container roles); credentials never appear in a URL Samsa logs, since
// Redact strips the query string and user information. gs:// and azblob://
// are not compiled in: their SDKs would double the binary for a driver no
// test here exercises.
//
// Objects are immutable in use: tiered storage writes each key once and
// never overwrites it, so a reader that sees a key sees all of it. A Put
// either makes the whole object visible or none of it (S3 PutObject and
// gocloud's file driver, which writes a temporary file and renames it, both
// guarantee that).
//
// Errors are classified once, here: ErrNotFound for a missing key,
// ErrTransient for what a retry may fix (throttling such as S3's 503
// SlowDown, timeouts, resets, truncated bodies); everything else is
// permanent. Retrying wraps a Bucket with bounded retries with exponential
// backoff and jitter.
package blob

import (
	"context"
	"errors"
	"io"
	"net/url"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrNotFound is returned for a key that does not exist.
	ErrNotFound = errors.New("blob: object not found")
	// ErrTransient marks an error a retry may fix.
	ErrTransient = errors.New("blob: transient object-store error")
	// ErrTruncated is returned when a read returned fewer bytes than the
	// object or range holds; it is also transient.
	ErrTruncated = errors.New("blob: truncated object read")
	// ErrClosed is returned by a closed bucket.
	ErrClosed = errors.New("blob: bucket closed")
)

// ObjectInfo describes one object of a listing.
type ObjectInfo struct {
	Key  string
	Size int64
}

// Bucket is an object store. Implementations are safe for concurrent use.
type Bucket interface {
	// Put stores body under key, replacing nothing in normal use: keys are
	// written once.
	Put(ctx context.Context, key string, body []byte) error
	// PutSection stores size bytes read from r at offset 0, streaming them
	// so a segment is never held in memory whole; a retry reads r again.
	PutSection(ctx context.Context, key string, r io.ReaderAt, size int64) error
	// Get returns the whole object.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange returns length bytes from offset; length < 0 reads to the
	// end. A range past the end returns the bytes there are.
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	// Size returns the object's size in bytes.
	Size(ctx context.Context, key string) (int64, error)
	// List calls fn for every object whose key starts with prefix, in key
	// order, stopping at the first error fn returns.
	List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Close releases the bucket.
	Close() error
}

// Redact returns rawURL without user information or query parameters, for
// log lines: a query may carry an endpoint's credentials.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "[unparseable bucket url]"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// IsTransient reports whether err is worth retrying.
func IsTransient(err error) bool {
	return errors.Is(err, ErrTransient) || errors.Is(err, ErrTruncated)
}
