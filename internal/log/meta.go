package log

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Files in each log dir and partition dir.
const (
	MetaPropertiesFile    = "meta.properties"
	CleanShutdownFile     = ".kafka_cleanshutdown"
	PartitionMetadataFile = "partition.metadata"
	// maxMetadataFileBytes bounds reads of the small text files above.
	maxMetadataFileBytes = 64 << 10
)

// EncodeUUID renders a Kafka Uuid as Kafka prints it: base64url, no padding.
func EncodeUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// DecodeUUID parses EncodeUUID's form.
func DecodeUUID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("log: invalid uuid %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// RandomUUID returns a random Uuid as Kafka's Uuid.randomUuid draws one:
// not one of the reserved ids (first 8 bytes zero: the zero Uuid and the
// metadata topic's) and not printing with a leading "-", which Kafka's
// command-line tools would take for an option. Directory ids, topic ids,
// delegation token ids and the cluster id are all drawn so.
func RandomUUID() [16]byte {
	for {
		var id [16]byte
		rand.Read(id[:])
		if EncodeUUID(id)[0] == '-' || [8]byte(id[:8]) == [8]byte{} {
			continue
		}
		return id
	}
}

// readSmallFile reads a whole small file.
func readSmallFile(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(&readerAt{f: f}, maxMetadataFileBytes))
}

// MetaProperties is a log dir's meta.properties (KRaft, version 1).
type MetaProperties struct {
	Version     int
	ClusterID   string
	NodeID      int32
	DirectoryID [16]byte
}

// ReadMetaProperties reads dir/meta.properties.
func ReadMetaProperties(fsys vfs.FS, dir string) (MetaProperties, error) {
	var m MetaProperties
	path := filepath.Join(dir, MetaPropertiesFile)
	data, err := readSmallFile(fsys, path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, err
		}
		return m, storageError("read "+path, err)
	}
	props := parseProperties(data)
	if m.Version, err = strconv.Atoi(props["version"]); err != nil {
		return m, corruptError(path+": version "+strconv.Quote(props["version"]), nil)
	}
	m.ClusterID = props["cluster.id"]
	if s, ok := props["node.id"]; ok {
		id, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return m, corruptError(path+": node.id "+strconv.Quote(s), nil)
		}
		m.NodeID = int32(id)
	}
	if s, ok := props["directory.id"]; ok {
		if m.DirectoryID, err = DecodeUUID(s); err != nil {
			return m, corruptError(path, err)
		}
	}
	return m, nil
}

// WriteMetaProperties writes dir/meta.properties atomically.
func WriteMetaProperties(fsys vfs.FS, dir string, m MetaProperties, now time.Time) error {
	var b bytes.Buffer
	b.WriteString("#\n#" + now.UTC().Format("Mon Jan 02 15:04:05 MST 2006") + "\n")
	props := map[string]string{
		"version":      strconv.Itoa(m.Version),
		"cluster.id":   m.ClusterID,
		"node.id":      strconv.Itoa(int(m.NodeID)),
		"directory.id": EncodeUUID(m.DirectoryID),
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k + "=" + props[k] + "\n")
	}
	return writeFileAtomic(fsys, filepath.Join(dir, MetaPropertiesFile), b.Bytes())
}

// parseProperties reads the subset of Java properties syntax Kafka writes:
// comment lines starting with # or !, and key=value (or key:value) lines.
func parseProperties(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			out[line] = ""
			continue
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out
}

// WritePartitionMetadata writes partition.metadata in Kafka's format.
func WritePartitionMetadata(fsys vfs.FS, partitionDir string, topicID [16]byte) error {
	data := "version: 0\ntopic_id: " + EncodeUUID(topicID)
	return writeFileAtomic(fsys, filepath.Join(partitionDir, PartitionMetadataFile), []byte(data))
}

// ReadPartitionMetadata returns the topic id in partition.metadata.
func ReadPartitionMetadata(fsys vfs.FS, partitionDir string) ([16]byte, error) {
	path := filepath.Join(partitionDir, PartitionMetadataFile)
	data, err := readSmallFile(fsys, path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return [16]byte{}, err
		}
		return [16]byte{}, storageError("read "+path, err)
	}
	props := parseProperties(data)
	if props["version"] != "0" {
		return [16]byte{}, corruptError(path+": version "+strconv.Quote(props["version"]), nil)
	}
	id, err := DecodeUUID(props["topic_id"])
	if err != nil {
		return id, corruptError(path, err)
	}
	return id, nil
}

// writeCleanShutdownMarker writes dir/.kafka_cleanshutdown.
func writeCleanShutdownMarker(fsys vfs.FS, dir string, brokerEpoch int64) error {
	data := fmt.Sprintf(`{"version":0,"brokerEpoch":%d}`, brokerEpoch)
	return writeFileAtomic(fsys, filepath.Join(dir, CleanShutdownFile), []byte(data))
}

// hasCleanShutdownMarker reports whether dir holds the marker.
func hasCleanShutdownMarker(fsys vfs.FS, dir string) (bool, error) {
	_, err := fsys.Stat(filepath.Join(dir, CleanShutdownFile))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, storageError("stat clean shutdown marker", err)
}

// removeCleanShutdownMarker deletes the marker durably, so a crash from now on
// is detected at the next startup.
func removeCleanShutdownMarker(fsys vfs.FS, dir string) error {
	err := fsys.Remove(filepath.Join(dir, CleanShutdownFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storageError("remove clean shutdown marker", err)
	}
	return storageError("sync log dir", fsys.SyncDir(dir))
}

// parsePartitionDirName splits "<topic>-<partition>".
func parsePartitionDirName(name string) (TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return TopicPartition{}, false
	}
	return TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}
