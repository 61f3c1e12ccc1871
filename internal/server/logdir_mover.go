package server

import (
	"context"
	"sync/atomic"
	"time"
)

// logDirMover drives the replica moves between log dirs that
// AlterReplicaLogDirs starts (partition/logdir_move.go): one goroutine
// copying replica.fetch.max.bytes per moving partition per step while a
// move makes progress, woken by a new move and every
// logDirMoveCheckIntervalMs (to resume moves found at startup or retry a
// failed swap).
type logDirMover struct {
	wake chan struct{}
	done chan struct{}
	// held stops the copying while set: tests hold it to see a move in
	// progress.
	held atomic.Bool
}

// logDirMoveCheckIntervalMs is how often the mover looks for moves while
// none is copying.
const logDirMoveCheckIntervalMs = 1000

func (n *Node) startLogDirMover(ctx context.Context) {
	mv := &logDirMover{wake: make(chan struct{}, 1), done: make(chan struct{})}
	n.logDirMover = mv
	n.broker.LogDirMoverWake = func() {
		select {
		case mv.wake <- struct{}{}:
		default:
		}
	}
	chunkBytes := n.cfg.ReplicaFetchMaxBytes
	go func() {
		defer close(mv.done)
		ticker := time.NewTicker(logDirMoveCheckIntervalMs * time.Millisecond)
		defer ticker.Stop()
		for {
			pending, swapped := false, false
			if !mv.held.Load() {
				pending, swapped = n.partitions.StepMoves(chunkBytes)
			}
			if swapped && n.replicas != nil {
				n.replicas.Apply()
			}
			if pending {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-mv.wake:
			case <-ticker.C:
			}
		}
	}()
}

// stopLogDirMover waits for the mover to stop; the node's context must be
// cancelled first.
func (n *Node) stopLogDirMover() {
	if n.logDirMover != nil {
		<-n.logDirMover.done
	}
}
