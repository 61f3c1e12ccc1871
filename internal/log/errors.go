package log

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Callers test them with errors.Is; the
// returned errors wrap them with detail.
var (
	// ErrOffsetOutOfRange: the offset lies outside [LogStartOffset, LogEndOffset]
	// (OFFSET_OUT_OF_RANGE upstream).
	ErrOffsetOutOfRange = errors.New("log: offset out of range")
	// ErrOffsetInRemoteTier: the offset is at or above the log start offset
	// but below the first local segment, so its data lives in the remote
	// tier only (a consumer is served from the bucket; a follower answers
	// OFFSET_MOVED_TO_TIERED_STORAGE). It wraps ErrOffsetOutOfRange, so a
	// caller that knows nothing of tiering answers OFFSET_OUT_OF_RANGE.
	ErrOffsetInRemoteTier = fmt.Errorf("%w: in the remote tier", ErrOffsetOutOfRange)
	// ErrStorage wraps an I/O failure of the underlying disk (ENOSPC, EIO, ...):
	// KAFKA_STORAGE_ERROR upstream. A Log that saw one refuses further writes.
	ErrStorage = errors.New("log: storage error")
	// ErrCorrupt marks bytes on disk that are not what this package wrote:
	// a torn or corrupt batch, a malformed index or checkpoint.
	ErrCorrupt = errors.New("log: corrupt data")
	// ErrClosed: the Log or Manager was closed.
	ErrClosed = errors.New("log: closed")
	// ErrInvalidBatch: Append was given bytes that are not whole RecordBatch v2
	// batches (CORRUPT_MESSAGE upstream; validation should have caught it).
	ErrInvalidBatch = errors.New("log: invalid batch")
	// ErrBatchTooLarge: the batch is larger than segment.bytes
	// (RECORD_BATCH_TOO_LARGE / RECORD_LIST_TOO_LARGE upstream).
	ErrBatchTooLarge = errors.New("log: batch larger than segment.bytes")
	// ErrUnexpectedAppendOffset: a follower append does not continue at the log
	// end offset (Kafka's UnexpectedAppendOffsetException).
	ErrUnexpectedAppendOffset = errors.New("log: unexpected append offset")
)

// storageError wraps an I/O error from the filesystem as ErrStorage while
// keeping the cause reachable with errors.Is (for example syscall.ENOSPC).
func storageError(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrStorage) {
		return err
	}
	return &wrappedError{sentinel: ErrStorage, msg: what, cause: err}
}

// corruptError wraps a cause as ErrCorrupt.
func corruptError(what string, cause error) error {
	return &wrappedError{sentinel: ErrCorrupt, msg: what, cause: cause}
}

// wrappedError matches both its sentinel and its cause.
type wrappedError struct {
	sentinel error
	msg      string
	cause    error
}

func (e *wrappedError) Error() string {
	if e.cause == nil {
		return fmt.Sprintf("%v: %s", e.sentinel, e.msg)
	}
	return fmt.Sprintf("%v: %s: %v", e.sentinel, e.msg, e.cause)
}

func (e *wrappedError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}
