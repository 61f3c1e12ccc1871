package registry

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Schema types.
const (
	typeAvro     = "AVRO"
	typeProtobuf = "PROTOBUF"
	typeJSON     = "JSON"
)

// Modes.
const (
	modeReadWrite        = "READWRITE"
	modeReadOnly         = "READONLY"
	modeReadOnlyOverride = "READONLY_OVERRIDE"
	modeImport           = "IMPORT"
)

// version is one registered version of a subject.
type version struct {
	Subject string
	Version int
	ID      int
	Deleted bool
}

// storedSchema is a schema by id: its content, shared by every subject
// version that registered the same content.
type storedSchema struct {
	ID         int
	SchemaType string // AVRO, PROTOBUF or JSON; never empty
	Schema     string
	References []reference
}

type subject struct {
	// versions by version number.
	versions map[int]*version
	config   string // "" when the subject has no level of its own
	mode     string // "" when the subject has no mode of its own
}

// state is the registry's content, built only by applying _schemas records
// in log order. It has no locks, clocks or I/O; Registry guards it.
//
// Invariant: every version's ID is a key of schemas.
// Invariant: maxID >= every key of schemas.
type state struct {
	subjects map[string]*subject
	schemas  map[int]*storedSchema
	// byContent finds the id of identical content (type, schema text and
	// references), so the same schema keeps one id across subjects.
	byContent    map[string]int
	maxID        int
	globalConfig string // "" means the default, BACKWARD
	globalMode   string // "" means READWRITE
	badRecords   int
}

func newState() *state {
	return &state{subjects: map[string]*subject{}, schemas: map[int]*storedSchema{}, byContent: map[string]int{}}
}

func contentKey(schemaType, schema string, references []reference) string {
	var b strings.Builder
	b.WriteString(schemaType)
	b.WriteByte(0)
	b.WriteString(schema)
	for _, r := range references {
		b.WriteByte(0)
		b.WriteString(r.Name + "\x01" + r.Subject + "\x01")
		b.WriteString(strconv.Itoa(r.Version))
	}
	return b.String()
}

func (s *state) subjectLocked(name string, create bool) *subject {
	sub := s.subjects[name]
	if sub == nil && create {
		sub = &subject{versions: map[int]*version{}}
		s.subjects[name] = sub
	}
	return sub
}

// apply applies one decoded record.
func (s *state) apply(record decodedRecord) {
	key := record.Key
	subjectName := ""
	if key.Subject != nil {
		subjectName = *key.Subject
	}
	switch key.KeyType {
	case keySchema:
		if key.Subject == nil {
			return
		}
		sub := s.subjectLocked(subjectName, true)
		if record.Tombstone {
			delete(sub.versions, key.Version)
			s.dropEmptyLocked(subjectName)
			return
		}
		value := record.Schema
		schemaType := value.SchemaType
		if schemaType == "" {
			schemaType = typeAvro
		}
		if _, known := s.schemas[value.ID]; !known {
			s.schemas[value.ID] = &storedSchema{ID: value.ID, SchemaType: schemaType, Schema: value.Schema, References: value.References}
			content := contentKey(schemaType, value.Schema, value.References)
			if _, seen := s.byContent[content]; !seen {
				s.byContent[content] = value.ID
			}
		}
		s.maxID = max(s.maxID, value.ID)
		sub.versions[value.Version] = &version{Subject: subjectName, Version: value.Version, ID: value.ID, Deleted: value.Deleted}
	case keyConfig:
		if record.Tombstone {
			record.Config.CompatibilityLevel = ""
		}
		if key.Subject == nil {
			s.globalConfig = record.Config.CompatibilityLevel
			return
		}
		s.subjectLocked(subjectName, true).config = record.Config.CompatibilityLevel
		s.dropEmptyLocked(subjectName)
	case keyMode:
		if record.Tombstone {
			record.Mode.Mode = ""
		}
		if key.Subject == nil {
			s.globalMode = record.Mode.Mode
			return
		}
		s.subjectLocked(subjectName, true).mode = record.Mode.Mode
		s.dropEmptyLocked(subjectName)
	case keyDeleteSubject:
		if record.Tombstone {
			return
		}
		if sub := s.subjects[record.Delete.Subject]; sub != nil {
			for number, v := range sub.versions {
				if number <= record.Delete.Version {
					v.Deleted = true
				}
			}
		}
	case keyClearSubject:
		if record.Tombstone {
			return
		}
		if sub := s.subjects[record.Delete.Subject]; sub != nil {
			for number := range sub.versions {
				if number <= record.Delete.Version {
					delete(sub.versions, number)
				}
			}
			s.dropEmptyLocked(record.Delete.Subject)
		}
	}
}

func (s *state) dropEmptyLocked(name string) {
	if sub := s.subjects[name]; sub != nil && len(sub.versions) == 0 && sub.config == "" && sub.mode == "" {
		delete(s.subjects, name)
	}
}

// sortedVersions lists a subject's versions in order, with or without the
// soft-deleted ones.
func (s *state) sortedVersions(name string, includeDeleted bool) []*version {
	sub := s.subjects[name]
	if sub == nil {
		return nil
	}
	out := make([]*version, 0, len(sub.versions))
	for _, v := range sub.versions {
		if includeDeleted || !v.Deleted {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// subjectNames lists subjects with at least one version, filtered.
func (s *state) subjectNames(includeDeleted, deletedOnly bool, prefix string) []string {
	out := []string{}
	for name := range s.subjects {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		live, deleted := 0, 0
		for _, v := range s.subjects[name].versions {
			if v.Deleted {
				deleted++
			} else {
				live++
			}
		}
		switch {
		case deletedOnly && deleted > 0 && live == 0:
		case !deletedOnly && live > 0:
		case !deletedOnly && includeDeleted && deleted > 0:
		default:
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// referencedBy lists the ids of live versions whose schema references
// subject at version.
func (s *state) referencedBy(subjectName string, versionNumber int) []int {
	out := []int{}
	seen := map[int]bool{}
	for _, sub := range s.subjects {
		for _, v := range sub.versions {
			if v.Deleted || seen[v.ID] {
				continue
			}
			for _, r := range s.schemas[v.ID].References {
				if r.Subject == subjectName && r.Version == versionNumber {
					seen[v.ID] = true
					out = append(out, v.ID)
					break
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// compatibilityLevel is the effective level of a subject.
func (s *state) compatibilityLevel(name string) string {
	if sub := s.subjects[name]; sub != nil && sub.config != "" {
		return sub.config
	}
	if s.globalConfig != "" {
		return s.globalConfig
	}
	return "BACKWARD"
}

// mode is the effective mode of a subject.
func (s *state) mode(name string) string {
	if sub := s.subjects[name]; name != "" && sub != nil && sub.mode != "" {
		return sub.mode
	}
	if s.globalMode != "" {
		return s.globalMode
	}
	return modeReadWrite
}
