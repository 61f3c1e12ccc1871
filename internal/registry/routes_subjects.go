package registry

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/samsa-streaming/samsa/internal/authz"
)

// maxReferenceDepth bounds reference chains, so a cycle or an absurd chain
// is refused instead of recursed into.
const maxReferenceDepth = 64

// registerRequest is the body of register, lookup and compatibility calls.
type registerRequest struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []reference `json:"references"`
	Metadata   any         `json:"metadata"`
	RuleSet    any         `json:"ruleSet"`
	ID         int         `json:"id"`
	Version    int         `json:"version"`
}

// versionAnswer is a subject version as Confluent answers it.
type versionAnswer struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
	Deleted    bool        `json:"deleted,omitempty"`
}

func answerFor(s *state, v *version) versionAnswer {
	stored := s.schemas[v.ID]
	answer := versionAnswer{Subject: v.Subject, Version: v.Version, ID: v.ID, Schema: stored.Schema, References: stored.References, Deleted: v.Deleted}
	if stored.SchemaType != typeAvro {
		answer.SchemaType = stored.SchemaType
	}
	return answer
}

// dependencies resolves references to the schemas they name, leaves first.
func (s *state) dependencies(references []reference, depth int) ([]dependency, error) {
	if depth > maxReferenceDepth {
		return nil, fmt.Errorf("references nest deeper than %d", maxReferenceDepth)
	}
	var out []dependency
	for _, ref := range references {
		if ref.Name == "" || ref.Subject == "" {
			return nil, fmt.Errorf("reference without name or subject")
		}
		v := s.findVersion(ref.Subject, ref.Version, true)
		if v == nil {
			return nil, fmt.Errorf("reference %s (subject %s version %d) not found", ref.Name, ref.Subject, ref.Version)
		}
		stored := s.schemas[v.ID]
		nested, err := s.dependencies(stored.References, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, nested...)
		out = append(out, dependency{Name: ref.Name, SchemaType: stored.SchemaType, Schema: stored.Schema})
	}
	return out, nil
}

// findVersion finds a version (0 = latest live one).
func (s *state) findVersion(subjectName string, number int, includeDeleted bool) *version {
	versions := s.sortedVersions(subjectName, includeDeleted)
	if len(versions) == 0 {
		return nil
	}
	if number == 0 {
		return versions[len(versions)-1]
	}
	for _, v := range versions {
		if v.Version == number {
			return v
		}
	}
	return nil
}

// parseRequest parses a request's schema with its references.
func (s *state) parseRequest(body registerRequest) (parsedSchema, string, error) {
	schemaType := body.SchemaType
	if schemaType == "" {
		schemaType = typeAvro
	}
	dependencies, err := s.dependencies(body.References, 0)
	if err != nil {
		return nil, schemaType, errInvalidSchemaBody(err)
	}
	parsed, err := parseSchema(schemaType, body.Schema, dependencies)
	if err != nil {
		return nil, schemaType, errInvalidSchemaBody(err)
	}
	return parsed, schemaType, nil
}

// parsedVersions parses a subject's live versions, oldest first.
func (s *state) parsedVersions(subjectName string) ([]parsedSchema, error) {
	var out []parsedSchema
	for _, v := range s.sortedVersions(subjectName, false) {
		stored := s.schemas[v.ID]
		dependencies, err := s.dependencies(stored.References, 0)
		if err != nil {
			return nil, err
		}
		parsed, err := parseSchema(stored.SchemaType, stored.Schema, dependencies)
		if err != nil {
			return nil, err
		}
		out = append(out, parsed)
	}
	return out, nil
}

// matching finds the version of subject whose content equals the request's.
func (s *state) matching(subjectName, schemaType, canonical string, references []reference, includeDeleted bool) *version {
	content := contentKey(schemaType, canonical, references)
	for _, v := range s.sortedVersions(subjectName, includeDeleted) {
		stored := s.schemas[v.ID]
		if contentKey(stored.SchemaType, stored.Schema, stored.References) == content {
			return v
		}
	}
	return nil
}

func (r *Registry) register(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	var body registerRequest
	if err := readBody(req, &body, false); err != nil {
		return nil, err
	}
	return r.write(req.Context(), func(s *state) ([]storeRecord, any, error) {
		mode := s.mode(subjectName)
		if mode == modeReadOnly || mode == modeReadOnlyOverride {
			return nil, nil, errNotPermitted("Subject %s is in read-only mode", subjectName)
		}
		if body.ID != 0 && mode != modeImport {
			return nil, nil, errNotPermitted("Subject %s is not in import mode", subjectName)
		}
		parsed, schemaType, err := s.parseRequest(body)
		if err != nil {
			return nil, nil, err
		}
		canonical := parsed.canonical()
		if existing := s.matching(subjectName, schemaType, canonical, body.References, false); existing != nil && (body.ID == 0 || body.ID == existing.ID) {
			return nil, map[string]int{"id": existing.ID}, nil
		}
		id := s.byContent[contentKey(schemaType, canonical, body.References)]
		number := 1
		for _, v := range s.sortedVersions(subjectName, true) {
			number = max(number, v.Version+1)
		}
		if mode == modeImport {
			if body.ID <= 0 {
				return nil, nil, errNotPermitted("A schema id is required in import mode")
			}
			if stored := s.schemas[body.ID]; stored != nil && contentKey(stored.SchemaType, stored.Schema, stored.References) != contentKey(schemaType, canonical, body.References) {
				return nil, nil, errNotPermitted("Overwrite new schema with id %d is not permitted.", body.ID)
			}
			id = body.ID
			if body.Version > 0 {
				if s.findVersion(subjectName, body.Version, true) != nil {
					return nil, nil, errNotPermitted("Version %d of subject %s already exists", body.Version, subjectName)
				}
				number = body.Version
			}
		} else {
			previous, err := s.parsedVersions(subjectName)
			if err != nil {
				return nil, nil, errStoreFailure(err)
			}
			if issues := checkCompatibility(s.compatibilityLevel(subjectName), parsed, previous); len(issues) > 0 {
				return nil, nil, errIncompatible(issues)
			}
			if id == 0 {
				id = s.maxID + 1
			}
		}
		value := schemaValue{Subject: subjectName, Version: number, ID: id, References: body.References, Schema: canonical}
		if schemaType != typeAvro {
			value.SchemaType = schemaType
		}
		return []storeRecord{{key: schemaKey(subjectName, number), value: encodeJSON(value)}}, map[string]int{"id": id}, nil
	})
}

func (r *Registry) lookup(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	var body registerRequest
	if err := readBody(req, &body, false); err != nil {
		return nil, err
	}
	includeDeleted := queryBool(req, "deleted")
	return r.read(func(s *state) (any, error) {
		if len(s.sortedVersions(subjectName, includeDeleted)) == 0 {
			return nil, errSubjectNotFound(subjectName)
		}
		parsed, schemaType, err := s.parseRequest(body)
		if err != nil {
			return nil, err
		}
		v := s.matching(subjectName, schemaType, parsed.canonical(), body.References, includeDeleted)
		if v == nil {
			return nil, errSchemaNotFound()
		}
		return answerFor(s, v), nil
	})
}

func (r *Registry) listSubjects(req *http.Request) (any, error) {
	includeDeleted, deletedOnly := queryBool(req, "deleted"), queryBool(req, "deletedOnly")
	prefix := req.URL.Query().Get("subjectPrefix")
	if prefix == ":*:" {
		prefix = "" // the default context, as Confluent's clients send it
	}
	return r.read(func(s *state) (any, error) {
		// Subjects the principal may not describe are left out, as
		// Metadata leaves out topics.
		names := s.subjectNames(includeDeleted, deletedOnly, prefix)
		return r.visible(req, names, authz.OpDescribe), nil
	})
}

// visible are the names of subjects on which req's principal may perform
// operation, in their order.
func (r *Registry) visible(req *http.Request, names []string, operation authz.Operation) []string {
	if r.config.Authorizer == nil {
		return names
	}
	out := []string{}
	for _, name := range names {
		if r.allowed(req, authz.ResourceSubject, name, operation) {
			out = append(out, name)
		}
	}
	return out
}

func (r *Registry) listVersions(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	includeDeleted, deletedOnly := queryBool(req, "deleted"), queryBool(req, "deletedOnly")
	return r.read(func(s *state) (any, error) {
		versions := s.sortedVersions(subjectName, includeDeleted || deletedOnly)
		out := []int{}
		for _, v := range versions {
			if !deletedOnly || v.Deleted {
				out = append(out, v.Version)
			}
		}
		if len(versions) == 0 {
			return nil, errSubjectNotFound(subjectName)
		}
		return out, nil
	})
}

func (r *Registry) getVersion(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	number, err := parseVersion(req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	includeDeleted := queryBool(req, "deleted")
	return r.read(func(s *state) (any, error) {
		if len(s.sortedVersions(subjectName, true)) == 0 {
			return nil, errSubjectNotFound(subjectName)
		}
		v := s.findVersion(subjectName, number, includeDeleted)
		if v == nil {
			return nil, errVersionNotFound(req.PathValue("version"))
		}
		return answerFor(s, v), nil
	})
}

func (r *Registry) referencedBy(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	number, err := parseVersion(req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	return r.read(func(s *state) (any, error) {
		if len(s.sortedVersions(subjectName, true)) == 0 {
			return nil, errSubjectNotFound(subjectName)
		}
		v := s.findVersion(subjectName, number, true)
		if v == nil {
			return nil, errVersionNotFound(req.PathValue("version"))
		}
		return s.referencedBy(subjectName, v.Version), nil
	})
}

func (r *Registry) deleteVersion(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	number, err := parseVersion(req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	permanent := queryBool(req, "permanent")
	return r.write(req.Context(), func(s *state) ([]storeRecord, any, error) {
		if mode := s.mode(subjectName); mode == modeReadOnly || mode == modeReadOnlyOverride {
			return nil, nil, errNotPermitted("Subject %s is in read-only mode", subjectName)
		}
		if len(s.sortedVersions(subjectName, true)) == 0 {
			return nil, nil, errSubjectNotFound(subjectName)
		}
		v := s.findVersion(subjectName, number, permanent)
		if v == nil {
			return nil, nil, errVersionNotFound(req.PathValue("version"))
		}
		if len(s.referencedBy(subjectName, v.Version)) > 0 {
			return nil, nil, errReferenceExists(subjectName, v.Version)
		}
		key := schemaKey(subjectName, v.Version)
		if permanent {
			if !v.Deleted {
				return nil, nil, errVersionNotSoftDeleted(subjectName, v.Version)
			}
			return []storeRecord{{key: key}}, v.Version, nil
		}
		if v.Deleted {
			return nil, nil, errVersionSoftDeleted(subjectName, v.Version)
		}
		value := s.valueOf(v)
		value.Deleted = true
		return []storeRecord{{key: key, value: encodeJSON(value)}}, v.Version, nil
	})
}

func (s *state) valueOf(v *version) schemaValue {
	stored := s.schemas[v.ID]
	value := schemaValue{Subject: v.Subject, Version: v.Version, ID: v.ID, References: stored.References, Schema: stored.Schema, Deleted: v.Deleted}
	if stored.SchemaType != typeAvro {
		value.SchemaType = stored.SchemaType
	}
	return value
}

func (r *Registry) deleteSubject(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	permanent := queryBool(req, "permanent")
	return r.write(req.Context(), func(s *state) ([]storeRecord, any, error) {
		if mode := s.mode(subjectName); mode == modeReadOnly || mode == modeReadOnlyOverride {
			return nil, nil, errNotPermitted("Subject %s is in read-only mode", subjectName)
		}
		all := s.sortedVersions(subjectName, true)
		live := s.sortedVersions(subjectName, false)
		if len(all) == 0 {
			return nil, nil, errSubjectNotFound(subjectName)
		}
		for _, v := range all {
			if len(s.referencedBy(subjectName, v.Version)) > 0 {
				return nil, nil, errReferenceExists(subjectName, v.Version)
			}
		}
		numbers := []int{}
		if permanent {
			if len(live) > 0 {
				return nil, nil, errSubjectNotSoftDeleted(subjectName)
			}
			var records []storeRecord
			for _, v := range all {
				numbers = append(numbers, v.Version)
				records = append(records, storeRecord{key: schemaKey(subjectName, v.Version)})
			}
			if sub := s.subjects[subjectName]; sub.config != "" {
				records = append(records, storeRecord{key: subjectKey(keyConfig, subjectName)})
			}
			if sub := s.subjects[subjectName]; sub.mode != "" {
				records = append(records, storeRecord{key: subjectKey(keyMode, subjectName)})
			}
			return records, numbers, nil
		}
		if len(live) == 0 {
			return nil, nil, errSubjectSoftDeleted(subjectName)
		}
		for _, v := range live {
			numbers = append(numbers, v.Version)
		}
		latest := slices.Max(numbers)
		value := deleteSubjectValue{Subject: subjectName, Version: latest}
		return []storeRecord{{key: subjectKey(keyDeleteSubject, subjectName), value: encodeJSON(value)}}, numbers, nil
	})
}

func parseID(text string) (int, error) {
	id, err := strconv.Atoi(text)
	if err != nil || id < 1 {
		return 0, errSchemaNotFound()
	}
	return id, nil
}
