package tier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
)

// Reader serves reads of the remote tier, Kafka's RemoteLogReader pool: a
// fixed number of workers (remote.log.reader.threads) take reads from a
// bounded queue (remote.log.reader.max.pending.tasks), so remote reads never
// run on a request handler and a slow store delays only the fetches that
// need it. A read finds the remote segment holding the offset, looks its
// position up in the segment's offset index and reads whole batches from
// there with ranged reads of fixed-size chunks; indexes and chunks go
// through the disk Cache.
type Reader struct {
	cfg   ReaderConfig
	tasks chan *readTask
	quota *RateQuota

	// queued counts reads submitted and not yet started, Kafka's
	// RemoteLogReaderTaskQueueSize.
	queued atomic.Int64
	// fetchedBytes counts bytes read from the store (cache misses), and
	// servedBytes bytes returned to fetches.
	fetchedBytes atomic.Int64
	servedBytes  atomic.Int64
	requests     atomic.Int64
	failures     atomic.Int64

	mu struct {
		sync.Mutex
		// views is each partition's last known readable remote state,
		// set by the remote log manager after each task.
		// Invariant: bounded by the tiered partitions this node hosts;
		// ForgetView drops a partition that goes.
		views map[Partition]RemoteView
	}
	closeOnce sync.Once
	stop      chan struct{}
	workers   sync.WaitGroup
	// running is the context of reads once started: canceled only by
	// Close, so a read outlives the fetch that asked for it (readTimeout
	// bounds it).
	running       context.Context
	cancelRunning context.CancelFunc
}

// ReaderConfig configures a Reader.
type ReaderConfig struct {
	Store *Store
	Cache *Cache
	// Threads is remote.log.reader.threads (10).
	Threads int
	// MaxPendingTasks is remote.log.reader.max.pending.tasks (100).
	MaxPendingTasks int
	// FetchMaxBytesPerSecond is remote.log.manager.fetch.max.bytes.per.second
	// (Long.MAX_VALUE): when the rate of bytes read from the store
	// (RateQuota) reaches it, new remote reads are skipped and the fetch
	// answers without that partition's data, as Kafka does (KIP-956).
	FetchMaxBytesPerSecond int64
	// ChunkBytes is the size of the ranged reads of segment data and of the
	// cached chunks. Samsa default: 4 MiB (DefaultChunkBytes).
	ChunkBytes int64
	// Now is the clock of the fetch quota; nil is time.Now.
	Now func() time.Time
}

// DefaultChunkBytes is the default chunk of a ranged read: 4 MiB, four
// consumer fetches of max.partition.fetch.bytes (1 MiB). A sequential
// consumer reads every byte of a chunk it caused to be fetched, so a larger
// chunk costs it nothing in read amplification and saves GETs: a store's
// cost per GET (S3's first-byte latency and request price; moto, which
// reads the whole object to answer a ranged GET) is paid once per four
// fetches instead of once per fetch. A random read pays up to one chunk
// for one batch.
const DefaultChunkBytes = 4 << 20

// readTimeout bounds one remote read once it started, however long the
// store takes (a hung endpoint holds a GET open until then). Samsa: 30 s,
// Kafka's request.timeout.ms default.
const readTimeout = 30 * time.Second

// ReadRequest asks for the batches of a partition from Offset.
type ReadRequest struct {
	Partition Partition
	Offset    int64
	// MaxBytes bounds the batches returned, but with MinOneBatch the first
	// batch is returned whole whatever its size (KIP-74).
	MaxBytes    int64
	MinOneBatch bool
	// UpperBound excludes batches starting at or past it: the high
	// watermark, or the last stable offset for read_committed.
	UpperBound int64
	// ReadCommitted collects the aborted transactions overlapping the
	// batches returned from the remote transaction indexes.
	ReadCommitted bool
}

// ReadResult is what a remote read found.
type ReadResult struct {
	// Records are whole batches, the first holding Offset.
	Records []byte
	// NextOffset follows the last batch returned (Offset when none).
	NextOffset int64
	// Aborted are the aborted transactions overlapping Records, and
	// AbortedComplete whether the remote indexes proved there are no more;
	// when not, the caller continues with the local log's.
	Aborted         []log.AbortedTxn
	AbortedComplete bool
}

// ErrRemoteOffsetOutOfRange is a read of an offset no readable remote
// segment holds (below the remote start, or expired meanwhile).
var ErrRemoteOffsetOutOfRange = errors.New("tier: offset not in the remote tier")

// ErrReaderBusy is a read refused because remote.log.reader.max.pending.tasks
// reads are already waiting.
var ErrReaderBusy = errors.New("tier: remote reader queue full")

// maxBatchBytes bounds one batch read from the store: a batch header
// claiming more is corrupt (message.max.bytes is an int32).
const maxBatchBytes = 1 << 31

// NewReader returns a Reader and starts its workers; Close stops them.
func NewReader(cfg ReaderConfig) *Reader {
	cfg.Threads = max(cfg.Threads, 1)
	cfg.MaxPendingTasks = max(cfg.MaxPendingTasks, 1)
	if cfg.ChunkBytes <= 0 {
		cfg.ChunkBytes = DefaultChunkBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Reader{cfg: cfg, tasks: make(chan *readTask, cfg.MaxPendingTasks), stop: make(chan struct{}),
		quota: NewRateQuota(cfg.FetchMaxBytesPerSecond)}
	r.running, r.cancelRunning = context.WithCancel(context.Background())
	r.mu.views = make(map[Partition]RemoteView)
	for range cfg.Threads {
		r.workers.Add(1)
		go r.work()
	}
	return r
}

// Close stops the workers; queued reads are answered with context.Canceled.
func (r *Reader) Close() {
	r.closeOnce.Do(func() {
		close(r.stop)
		r.cancelRunning()
	})
	r.workers.Wait()
	for {
		select {
		case t := <-r.tasks:
			r.queued.Add(-1)
			t.done(ReadResult{}, context.Canceled)
		default:
			return
		}
	}
}

// readTask is one queued piece of remote work: run does it, or is told
// why it will not be done (the context's error, or a closing reader).
type readTask struct {
	ctx context.Context
	run func(ctx context.Context, err error)
}

func (t *readTask) done(_ ReadResult, err error) { t.run(t.ctx, err) }

// Submit queues a read; done is called on a reader worker with its
// outcome, unless Submit returns an error (ErrReaderBusy), in which case
// done is never called. Canceling ctx abandons the read if it has not
// started; a read already running goes on to its end (within readTimeout),
// as Kafka's DelayedRemoteFetch cancels its task without interrupting it,
// and done then gets its outcome: the chunks it fetched are in the cache
// for the fetch that asks again, where abandoning the read mid-GET would
// throw them away and a store slower than remote.fetch.max.wait.ms would
// never serve anything.
func (r *Reader) Submit(ctx context.Context, req ReadRequest, done func(ReadResult, error)) error {
	return r.Go(ctx, func(_ context.Context, err error) {
		if err != nil {
			done(ReadResult{}, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.running, readTimeout)
		defer cancel()
		done(r.Read(ctx, req))
	})
}

// Go queues fn on the reader pool, for remote work other than a read (a
// ListOffsets timestamp lookup). fn gets a non-nil error instead of
// running when ctx ended first or the reader closed. ErrReaderBusy means
// fn will never be called.
func (r *Reader) Go(ctx context.Context, fn func(ctx context.Context, err error)) error {
	select {
	case r.tasks <- &readTask{ctx: ctx, run: fn}:
		r.queued.Add(1)
		return nil
	default:
		return ErrReaderBusy
	}
}

func (r *Reader) work() {
	defer r.workers.Done()
	for {
		select {
		case <-r.stop:
			return
		case t := <-r.tasks:
			r.queued.Add(-1)
			t.run(t.ctx, t.ctx.Err())
		}
	}
}

// QuotaExceeded reports whether the rate of bytes read from the store
// reached remote.log.manager.fetch.max.bytes.per.second.
func (r *Reader) QuotaExceeded() bool { return r.quota.Exceeded(r.cfg.Now()) }

// SetFetchMaxBytesPerSecond changes the fetch quota (a dynamic update).
func (r *Reader) SetFetchMaxBytesPerSecond(limit int64) { r.quota.SetLimit(limit) }

// ReaderStats are the Reader's counters for metrics.
type ReaderStats struct {
	QueueSize    int64
	FetchedBytes int64
	ServedBytes  int64
	Requests     int64
	Failures     int64
}

// Stats returns the Reader's counters.
func (r *Reader) Stats() ReaderStats {
	return ReaderStats{QueueSize: r.queued.Load(), FetchedBytes: r.fetchedBytes.Load(), ServedBytes: r.servedBytes.Load(),
		Requests: r.requests.Load(), Failures: r.failures.Load()}
}

// SetView records a partition's readable remote state.
func (r *Reader) SetView(p Partition, v RemoteView) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.views[p] = v
}

// ForgetView drops a partition's remote state: the next read lists the
// bucket.
func (r *Reader) ForgetView(p Partition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.mu.views, p)
}

// CachedView returns the partition's last known remote state, if any.
func (r *Reader) CachedView(p Partition) (RemoteView, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.mu.views[p]
	return v, ok
}

// View returns the partition's remote state, listing the bucket when none
// is known (a new leader before its first task). A view listed here takes
// every lineage: fencing is the remote log manager's job, which replaces it.
func (r *Reader) View(ctx context.Context, p Partition) (RemoteView, error) {
	if v, ok := r.CachedView(p); ok {
		return v, nil
	}
	uploads, err := r.cfg.Store.ListUploads(ctx, p)
	if err != nil {
		return RemoteView{}, err
	}
	v := BuildView(uploads, nil)
	r.SetView(p, v)
	return v, nil
}

// Read performs one read at once, on the caller's goroutine.
func (r *Reader) Read(ctx context.Context, req ReadRequest) (ReadResult, error) {
	r.requests.Add(1)
	res, err := r.read(ctx, req)
	if errors.Is(err, blob.ErrNotFound) {
		// The segment was expired since the view was taken: read again
		// from the bucket's state.
		r.ForgetView(req.Partition)
		res, err = r.read(ctx, req)
	}
	if errors.Is(err, blob.ErrNotFound) {
		err = fmt.Errorf("%w: %w", ErrRemoteOffsetOutOfRange, err)
	}
	if err != nil && !errors.Is(err, ErrRemoteOffsetOutOfRange) && ctx.Err() == nil {
		r.failures.Add(1)
	}
	r.servedBytes.Add(int64(len(res.Records)))
	return res, err
}

func (r *Reader) read(ctx context.Context, req ReadRequest) (ReadResult, error) {
	res := ReadResult{NextOffset: req.Offset}
	view, err := r.View(ctx, req.Partition)
	if err != nil {
		return res, err
	}
	seg, ok := view.Find(req.Offset)
	if !ok && req.Offset > view.EndOffset() {
		// Copied since the view was taken: read the bucket's state.
		r.ForgetView(req.Partition)
		if view, err = r.View(ctx, req.Partition); err != nil {
			return res, err
		}
		seg, ok = view.Find(req.Offset)
	}
	if !ok {
		return res, fmt.Errorf("%w: offset %d, remote tier has [%d, %d]", ErrRemoteOffsetOutOfRange, req.Offset, view.StartOffset(), view.EndOffset())
	}
	records, next, err := r.readBatches(ctx, &seg, req)
	if err != nil {
		return res, err
	}
	res.Records, res.NextOffset = records, next
	if req.ReadCommitted && len(records) > 0 {
		res.Aborted, res.AbortedComplete, err = r.collectAborted(ctx, &view, &seg, req.Offset, next)
	}
	return res, err
}

// readBatches reads the whole batches of seg from req.Offset within the
// request's bounds.
func (r *Reader) readBatches(ctx context.Context, seg *SegmentMetadata, req ReadRequest) ([]byte, int64, error) {
	position := int64(0)
	if hasFile(seg, FileOffsetIndex) {
		raw, err := r.file(ctx, seg, FileOffsetIndex)
		if err != nil {
			return nil, req.Offset, err
		}
		entries, err := DecodeOffsetIndex(raw)
		if err != nil {
			return nil, req.Offset, err
		}
		position = lookupPosition(entries, uint32(req.Offset-seg.BaseOffset))
	}
	// The batches go straight into out, sized for the whole answer so it
	// is never grown and copied batch by batch.
	out := make([]byte, 0, max(min(req.MaxBytes, seg.SegmentSizeBytes-position), 0))
	next := req.Offset
	chunks := &chunkCursor{index: -1}
	for position < seg.SegmentSizeBytes {
		head, err := r.readRange(ctx, seg, chunks, position, record.HeaderSize)
		if err != nil {
			return nil, req.Offset, err
		}
		h, err := record.ParseHeader(head)
		if err != nil {
			return nil, req.Offset, fmt.Errorf("%w: batch at %d of %s: %w", ErrCorruptMetadata, position, r.cfg.Store.SegmentDir(seg), err)
		}
		size := int64(h.Size())
		if size > maxBatchBytes || position+size > seg.SegmentSizeBytes {
			return nil, req.Offset, fmt.Errorf("%w: batch at %d of %d bytes overruns the segment", ErrCorruptMetadata, position, size)
		}
		if h.LastOffset() < req.Offset {
			position += size
			continue
		}
		if h.BaseOffset >= req.UpperBound {
			break
		}
		if int64(len(out))+size > req.MaxBytes && !(len(out) == 0 && req.MinOneBatch) {
			break
		}
		if out, err = r.appendRange(ctx, seg, chunks, out, position, size); err != nil {
			return nil, req.Offset, err
		}
		next = h.LastOffset() + 1
		position += size
	}
	return out, next, nil
}

// chunkCursor holds the chunk one read fetched from the store last, so
// consecutive batches of it cost no lookup.
type chunkCursor struct {
	index int64
	data  []byte
}

// readRange returns length bytes of seg's .log object at position,
// assembled from chunks: the one in the cursor, the bytes wanted of a
// cached chunk (read alone from its file, not the whole chunk), or a chunk
// fetched from the store and cached.
func (r *Reader) readRange(ctx context.Context, seg *SegmentMetadata, chunks *chunkCursor, position, length int64) ([]byte, error) {
	return r.appendRange(ctx, seg, chunks, make([]byte, 0, length), position, length)
}

// appendRange is readRange appending to out.
func (r *Reader) appendRange(ctx context.Context, seg *SegmentMetadata, chunks *chunkCursor, out []byte, position, length int64) ([]byte, error) {
	chunk := r.cfg.ChunkBytes
	for length > 0 {
		index := position / chunk
		from := position - index*chunk
		chunkLength := min(chunk, seg.SegmentSizeBytes-index*chunk)
		if from >= chunkLength {
			return nil, fmt.Errorf("%w: read at %d past the end of %s", ErrCorruptMetadata, position, r.cfg.Store.SegmentDir(seg))
		}
		n := min(length, chunkLength-from)
		var cached bool
		if chunks.index == index {
			out = append(out, chunks.data[from:from+n]...)
		} else if out, cached = r.cfg.Cache.AppendRange(out, r.chunkKey(seg, index), from, n); !cached {
			data, err := r.chunk(ctx, seg, index)
			if err != nil {
				return nil, err
			}
			chunks.index, chunks.data = index, data
			out = append(out, data[from:from+n]...)
		}
		position += n
		length -= n
	}
	return out, nil
}

func (r *Reader) chunkKey(seg *SegmentMetadata, index int64) string {
	return fmt.Sprintf("%s%s#%d", r.cfg.Store.SegmentDir(seg), FileSegment.ObjectName(), index)
}

func (r *Reader) chunk(ctx context.Context, seg *SegmentMetadata, index int64) ([]byte, error) {
	key := r.chunkKey(seg, index)
	b, _, err := r.cfg.Cache.Get(ctx, key, func(ctx context.Context) ([]byte, error) {
		from := index * r.cfg.ChunkBytes
		length := min(r.cfg.ChunkBytes, seg.SegmentSizeBytes-from)
		b, err := r.cfg.Store.ReadSegmentRange(ctx, seg, from, length)
		if err == nil && int64(len(b)) != length {
			err = fmt.Errorf("%w: chunk %d of %s: %d bytes, want %d", ErrCorruptMetadata, index, r.cfg.Store.SegmentDir(seg), len(b), length)
		}
		if err != nil {
			return nil, err
		}
		r.fetched(int64(len(b)))
		return b, nil
	})
	return b, err
}

// file returns a whole index object of seg through the cache.
func (r *Reader) file(ctx context.Context, seg *SegmentMetadata, kind FileKind) ([]byte, error) {
	key := r.cfg.Store.SegmentDir(seg) + kind.ObjectName()
	b, _, err := r.cfg.Cache.Get(ctx, key, func(ctx context.Context) ([]byte, error) {
		b, err := r.cfg.Store.ReadFile(ctx, seg, kind)
		if err != nil {
			return nil, err
		}
		r.fetched(int64(len(b)))
		return b, nil
	})
	return b, err
}

func (r *Reader) fetched(n int64) {
	r.fetchedBytes.Add(n)
	r.quota.Record(r.cfg.Now(), n)
}

func hasFile(seg *SegmentMetadata, kind FileKind) bool {
	for _, f := range seg.Files {
		if f.Kind == kind && f.Size > 0 {
			return true
		}
	}
	return false
}

// maxAbortedScanSegments bounds the remote segments whose transaction
// indexes one read_committed read scans for the marker of a transaction
// that began in the data returned. Samsa: 64; past it the caller goes on
// with the local log, as when the remote segments run out.
const maxAbortedScanSegments = 64

// collectAborted gathers the aborted transactions overlapping [from,
// upper) from the transaction indexes of seg and the remote segments after
// it, stopping at an entry whose last stable offset reaches upper: no
// transaction open below upper ends after it, Kafka's
// TransactionIndex.collectAbortedTxns.
func (r *Reader) collectAborted(ctx context.Context, view *RemoteView, seg *SegmentMetadata, from, upper int64) ([]log.AbortedTxn, bool, error) {
	var out []log.AbortedTxn
	scanned := 0
	for i := range view.Segments {
		s := &view.Segments[i]
		if s.BaseOffset < seg.BaseOffset {
			continue
		}
		if scanned++; scanned > maxAbortedScanSegments {
			break
		}
		if !hasFile(s, FileTransactionIndex) {
			continue
		}
		raw, err := r.file(ctx, s, FileTransactionIndex)
		if err != nil {
			return nil, false, err
		}
		entries, err := log.DecodeAbortedTxns(raw)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrCorruptMetadata, err)
		}
		for _, e := range entries {
			if e.LastOffset >= from && e.FirstOffset < upper {
				out = append(out, e)
			}
			if e.LastStableOffset >= upper {
				return out, true, nil
			}
		}
	}
	return out, false, nil
}
