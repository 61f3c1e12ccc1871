package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	gcblob "gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file://
	_ "gocloud.dev/blob/memblob"  // mem://
	_ "gocloud.dev/blob/s3blob"   // s3://
	"gocloud.dev/gcerrors"
)

// Open opens the bucket named by rawURL (see the package doc for schemes).
func Open(ctx context.Context, rawURL string) (Bucket, error) {
	if rawURL == "" {
		return nil, errors.New("blob: empty bucket url")
	}
	if strings.HasPrefix(rawURL, "file://") && !strings.Contains(rawURL, "metadata=") {
		// fileblob keeps per-object attribute sidecar files unless told
		// not to; tiered storage needs none, and without them the bucket
		// directory holds exactly the objects.
		separator := "?"
		if strings.Contains(rawURL, "?") {
			separator = "&"
		}
		rawURL += separator + "metadata=skip"
	}
	b, err := gcblob.OpenBucket(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob: open %s: %w", Redact(rawURL), err)
	}
	return &cloudBucket{bucket: b}, nil
}

// cloudBucket adapts a gocloud bucket to Bucket, classifying its errors.
type cloudBucket struct {
	bucket *gcblob.Bucket
}

func (c *cloudBucket) Put(ctx context.Context, key string, body []byte) error {
	opts := &gcblob.WriterOptions{ContentType: "application/octet-stream"}
	if err := c.bucket.WriteAll(ctx, key, body, opts); err != nil {
		return classify("put", key, err)
	}
	return nil
}

func (c *cloudBucket) PutSection(ctx context.Context, key string, r io.ReaderAt, size int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.bucket.NewWriter(ctx, key, &gcblob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return classify("put", key, err)
	}
	n, err := io.Copy(w, io.NewSectionReader(r, 0, size))
	if err == nil && n != size {
		err = fmt.Errorf("source gave %d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
	}
	if err != nil {
		// Cancelling before Close abandons the upload: nothing is stored.
		cancel()
		_ = w.Close()
		return classify("put", key, err)
	}
	if err := w.Close(); err != nil {
		return classify("put", key, err)
	}
	return nil
}

func (c *cloudBucket) Get(ctx context.Context, key string) ([]byte, error) {
	return c.GetRange(ctx, key, 0, -1)
}

func (c *cloudBucket) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 {
		return nil, fmt.Errorf("blob: get %s: negative offset %d", key, offset)
	}
	r, err := c.bucket.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, classify("get", key, err)
	}
	defer r.Close()
	want := r.Size() - offset
	if length >= 0 && length < want {
		want = length
	}
	if want < 0 {
		want = 0
	}
	body := make([]byte, want)
	n, err := io.ReadFull(r, body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, classify("get", key, err)
	}
	if int64(n) < want {
		return nil, fmt.Errorf("blob: get %s: %d of %d bytes: %w", key, n, want, ErrTruncated)
	}
	return body, nil
}

func (c *cloudBucket) Size(ctx context.Context, key string) (int64, error) {
	attrs, err := c.bucket.Attributes(ctx, key)
	if err != nil {
		return 0, classify("stat", key, err)
	}
	return attrs.Size, nil
}

// listRestarts bounds how often List starts again after an object vanished
// under it.
const listRestarts = 8

// List lists in key order. The file driver walks directories, so an object
// renamed into place or deleted while it walks (an upload's temporary file,
// a deletion) can fail the walk with NotFound; List then starts again past
// the last key it gave fn, so fn still sees each object once, in order.
func (c *cloudBucket) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	last, seen := "", false
	var err error
	for range listRestarts + 1 {
		var vanished bool
		vanished, err = c.list(ctx, prefix, func(o ObjectInfo) error {
			if seen && o.Key <= last {
				return nil
			}
			last, seen = o.Key, true
			return fn(o)
		})
		if !vanished {
			return err
		}
	}
	return err
}

// list is one walk; vanished reports a NotFound of the walk itself (not of
// fn).
func (c *cloudBucket) list(ctx context.Context, prefix string, fn func(ObjectInfo) error) (vanished bool, err error) {
	it := c.bucket.List(&gcblob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			err = classify("list", prefix, err)
			return errors.Is(err, ErrNotFound), err
		}
		if obj.IsDir {
			continue
		}
		if err := fn(ObjectInfo{Key: obj.Key, Size: obj.Size}); err != nil {
			return false, err
		}
	}
}

func (c *cloudBucket) Delete(ctx context.Context, key string) error {
	err := c.bucket.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return classify("delete", key, err)
	}
	return nil
}

func (c *cloudBucket) Close() error { return c.bucket.Close() }

// classify wraps err with the sentinel its gocloud code or network cause
// maps to.
func classify(op, key string, err error) error {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return fmt.Errorf("blob: %s %s: %w", op, key, ErrNotFound)
	case gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded, gcerrors.Internal:
		return fmt.Errorf("blob: %s %s: %w: %w", op, key, ErrTransient, err)
	case gcerrors.Canceled:
		return fmt.Errorf("blob: %s %s: %w", op, key, err)
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || isStatus5xx(err) {
		return fmt.Errorf("blob: %s %s: %w: %w", op, key, ErrTransient, err)
	}
	return fmt.Errorf("blob: %s %s: %w", op, key, err)
}

// isStatus5xx recognizes an HTTP 5xx the SDK gave up retrying (S3's 503
// SlowDown, 500 InternalError) when gocloud reports it as Unknown.
func isStatus5xx(err error) bool {
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		code := status.HTTPStatusCode()
		return code >= 500 || code == 429
	}
	return false
}
