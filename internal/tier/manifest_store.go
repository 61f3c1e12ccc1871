package tier

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/samsa-streaming/samsa/internal/blob"
)

// Manifests are versioned objects: each write puts a new key,
// <leader-epoch %010d>-<version %020d>.manifest, under the manifest's
// prefix, then deletes the keys below it. Keys are never rewritten, so a
// reader sees a whole manifest or none; the newest is the last key in key
// order, so a deposed leader (a lower epoch) never hides its successor's
// manifest, whatever the order their writes land in.

// manifestDir is the sub-directory of a partition's prefix holding its
// manifests; upload directories are named <base-offset>-<segment-id>, so
// the names never meet.
const manifestDir = "manifest/"

// PartitionManifestPrefix is the key prefix of p's manifests.
func (s *Store) PartitionManifestPrefix(p Partition) string {
	return s.PartitionPrefix(p) + manifestDir
}

// clusterTopicsPrefix is the key prefix of every topic manifest: the
// cluster manifest is the set of them, one directory per topic.
func (s *Store) clusterTopicsPrefix() string { return s.prefix + "tier/v1/cluster/topics/" }

// TopicManifestPrefix is the key prefix of a topic's manifests.
func (s *Store) TopicManifestPrefix(topicID [16]byte) string {
	return s.clusterTopicsPrefix() + hex.EncodeToString(topicID[:]) + "/"
}

// manifestKey names a manifest object.
func manifestKey(prefix string, leaderEpoch int32, version int64) string {
	return fmt.Sprintf("%s%010d-%020d%s", prefix, leaderEpoch, version, manifestObjectExtension)
}

// parseManifestKey returns the version of a manifest key, false for a key
// that is not one.
func parseManifestKey(prefix, key string) (int64, bool) {
	name, ok := strings.CutPrefix(key, prefix)
	if !ok || strings.Contains(name, "/") {
		return 0, false
	}
	name, ok = strings.CutSuffix(name, manifestObjectExtension)
	if !ok {
		return 0, false
	}
	epoch, version, ok := strings.Cut(name, "-")
	if !ok || len(epoch) != 10 || len(version) != 20 {
		return 0, false
	}
	if _, err := strconv.ParseUint(epoch, 10, 31); err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(version, 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// manifestKeys lists the manifest keys under prefix, in key order.
func (s *Store) manifestKeys(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := s.bucket.List(ctx, prefix, func(o blob.ObjectInfo) error {
		if _, ok := parseManifestKey(prefix, o.Key); ok {
			keys = append(keys, o.Key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tier: list %s: %w", prefix, err)
	}
	return keys, nil
}

// writeManifest puts body as the next version under prefix, then deletes
// the versions below it. A crash between the two leaves older versions,
// which the next write deletes.
func (s *Store) writeManifest(ctx context.Context, prefix string, leaderEpoch int32, body []byte) error {
	keys, err := s.manifestKeys(ctx, prefix)
	if err != nil {
		return err
	}
	var version int64
	for _, key := range keys {
		v, _ := parseManifestKey(prefix, key)
		version = max(version, v+1)
	}
	key := manifestKey(prefix, leaderEpoch, version)
	if err := s.bucket.Put(ctx, key, body); err != nil {
		return fmt.Errorf("tier: write %s: %w", key, err)
	}
	for _, old := range keys {
		if old >= key {
			// A newer leader's manifest: this one is already stale.
			continue
		}
		if err := s.bucket.Delete(ctx, old); err != nil {
			return fmt.Errorf("tier: delete %s: %w", old, err)
		}
	}
	return nil
}

// readManifest returns the newest manifest under prefix, or nil when there
// is none. A version deleted between the listing and the read (a writer
// pruning) is replaced by listing again, a bounded number of times.
func (s *Store) readManifest(ctx context.Context, prefix string) ([]byte, error) {
	const attempts = 3
	for range attempts {
		keys, err := s.manifestKeys(ctx, prefix)
		if err != nil || len(keys) == 0 {
			return nil, err
		}
		body, err := s.bucket.Get(ctx, keys[len(keys)-1])
		if errors.Is(err, blob.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tier: read %s: %w", keys[len(keys)-1], err)
		}
		return body, nil
	}
	return nil, fmt.Errorf("tier: manifests under %s kept changing while read", prefix)
}

// WritePartitionManifest writes m as p's newest manifest.
func (s *Store) WritePartitionManifest(ctx context.Context, m *PartitionManifest) error {
	return s.writeManifest(ctx, s.PartitionManifestPrefix(Partition{m.TopicID, m.Partition}), m.LeaderEpoch, m.Encode())
}

// ReadPartitionManifest returns p's newest manifest; false when it has
// none.
func (s *Store) ReadPartitionManifest(ctx context.Context, p Partition) (PartitionManifest, bool, error) {
	body, err := s.readManifest(ctx, s.PartitionManifestPrefix(p))
	if err != nil || body == nil {
		return PartitionManifest{}, false, err
	}
	m, err := DecodePartitionManifest(body)
	if err != nil {
		return m, false, err
	}
	if m.TopicID != p.TopicID || m.Partition != p.Partition {
		return m, false, fmt.Errorf("%w: manifest of %x-%d under %s", ErrCorruptManifest, m.TopicID, m.Partition, s.PartitionManifestPrefix(p))
	}
	return m, true, nil
}

// WriteTopicManifest writes m as its topic's newest manifest.
func (s *Store) WriteTopicManifest(ctx context.Context, m *TopicManifest) error {
	return s.writeManifest(ctx, s.TopicManifestPrefix(m.TopicID), m.LeaderEpoch, m.Encode())
}

// DeleteTopicManifest removes a topic's manifests, so a restore no longer
// brings the topic back (its tiering was turned off and its remote data
// deleted).
func (s *Store) DeleteTopicManifest(ctx context.Context, topicID [16]byte) error {
	return s.deletePrefix(ctx, s.TopicManifestPrefix(topicID))
}

// maxRestoreTopics bounds the topics one restore reads from the bucket.
const maxRestoreTopics = 100_000

// TopicManifests returns the newest manifest of every topic in the bucket,
// in topic-id order; a manifest that does not decode is an error.
func (s *Store) TopicManifests(ctx context.Context) ([]TopicManifest, error) {
	return s.topicManifests(ctx, nil)
}

// topicManifests is TopicManifests; with skip set, a manifest that does
// not decode is passed to it and left out instead of failing the call.
func (s *Store) topicManifests(ctx context.Context, skip func(error)) ([]TopicManifest, error) {
	root := s.clusterTopicsPrefix()
	var dirs []string
	err := s.bucket.List(ctx, root, func(o blob.ObjectInfo) error {
		id, _, ok := strings.Cut(strings.TrimPrefix(o.Key, root), "/")
		if !ok {
			return nil
		}
		if n := len(dirs); n == 0 || dirs[n-1] != id {
			if n >= maxRestoreTopics {
				return fmt.Errorf("tier: more than %d topics under %s", maxRestoreTopics, root)
			}
			dirs = append(dirs, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tier: list %s: %w", root, err)
	}
	var out []TopicManifest
	for _, id := range dirs {
		prefix := root + id + "/"
		body, err := s.readManifest(ctx, prefix)
		if err != nil {
			return nil, err
		}
		if body == nil {
			continue
		}
		m, err := DecodeTopicManifest(body)
		if err == nil && hex.EncodeToString(m.TopicID[:]) != id {
			err = fmt.Errorf("%w: manifest of topic %x", ErrCorruptManifest, m.TopicID)
		}
		if err != nil {
			err = fmt.Errorf("tier: %s: %w", prefix, err)
			if skip == nil {
				return nil, err
			}
			skip(err)
			continue
		}
		out = append(out, m)
	}
	return out, nil
}
