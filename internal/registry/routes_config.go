package registry

import (
	"net/http"
	"strings"
)

type configRequest struct {
	Compatibility string `json:"compatibility"`
}

type configAnswer struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
}

type modeRequest struct {
	Mode string `json:"mode"`
}

func (r *Registry) getGlobalConfig(req *http.Request) (any, error) {
	return r.read(func(s *state) (any, error) { return configAnswer{CompatibilityLevel: s.compatibilityLevel("")}, nil })
}

func (r *Registry) getSubjectConfig(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	defaultToGlobal := queryBool(req, "defaultToGlobal")
	return r.read(func(s *state) (any, error) {
		if sub := s.subjects[subjectName]; sub != nil && sub.config != "" {
			return configAnswer{CompatibilityLevel: sub.config}, nil
		}
		if defaultToGlobal {
			return configAnswer{CompatibilityLevel: s.compatibilityLevel("")}, nil
		}
		return nil, errSubjectLevelNotConfigured(subjectName)
	})
}

// configKey is the CONFIG key of subject, or the global one for "".
func configKey(keyType, subjectName string) []byte {
	if subjectName == "" {
		return globalKey(keyType)
	}
	return subjectKey(keyType, subjectName)
}

func (r *Registry) putConfig(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	var body configRequest
	if err := readBody(req, &body, false); err != nil {
		return nil, err
	}
	level := strings.ToUpper(body.Compatibility)
	if !compatibilityLevels[level] {
		return nil, errInvalidLevel(body.Compatibility)
	}
	return r.write(req.Context(), func(s *state) ([]storeRecord, any, error) {
		if subjectName != "" && s.mode(subjectName) == modeReadOnly {
			return nil, nil, errNotPermitted("Subject %s is in read-only mode", subjectName)
		}
		value := encodeJSON(configValue{CompatibilityLevel: level})
		return []storeRecord{{key: configKey(keyConfig, subjectName), value: value}}, configRequest{Compatibility: level}, nil
	})
}

func (r *Registry) deleteConfig(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	return r.write(req.Context(), func(s *state) ([]storeRecord, any, error) {
		if subjectName == "" {
			previous := s.compatibilityLevel("")
			return []storeRecord{{key: globalKey(keyConfig)}}, configAnswer{CompatibilityLevel: previous}, nil
		}
		sub := s.subjects[subjectName]
		if sub == nil {
			return nil, nil, errSubjectNotFound(subjectName)
		}
		if sub.config == "" {
			return nil, nil, errSubjectLevelNotConfigured(subjectName)
		}
		return []storeRecord{{key: subjectKey(keyConfig, subjectName)}}, configAnswer{CompatibilityLevel: sub.config}, nil
	})
}

var modes = map[string]bool{modeReadWrite: true, modeReadOnly: true, modeReadOnlyOverride: true, modeImport: true}

func (r *Registry) getMode(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	defaultToGlobal := queryBool(req, "defaultToGlobal")
	return r.read(func(s *state) (any, error) {
		if subjectName == "" {
			return modeRequest{Mode: s.mode("")}, nil
		}
		if sub := s.subjects[subjectName]; sub != nil && sub.mode != "" {
			return modeRequest{Mode: sub.mode}, nil
		}
		if defaultToGlobal {
			return modeRequest{Mode: s.mode("")}, nil
		}
		return nil, errSubjectModeNotConfigured(subjectName)
	})
}

func (r *Registry) putMode(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	var body modeRequest
	if err := readBody(req, &body, false); err != nil {
		return nil, err
	}
	mode := strings.ToUpper(body.Mode)
	if !modes[mode] {
		return nil, errInvalidMode(body.Mode)
	}
	force := queryBool(req, "force")
	return r.write(req.Context(), func(s *state) ([]storeRecord, any, error) {
		if mode == modeImport && !force {
			var live []string
			if subjectName == "" {
				live = s.subjectNames(false, false, "")
			} else if len(s.sortedVersions(subjectName, false)) > 0 {
				live = []string{subjectName}
			}
			if len(live) > 0 {
				return nil, nil, errNotPermitted("Cannot import since found existing subjects")
			}
		}
		return []storeRecord{{key: configKey(keyMode, subjectName), value: encodeJSON(modeValue{Mode: mode})}}, modeRequest{Mode: mode}, nil
	})
}

func (r *Registry) deleteMode(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	return r.write(req.Context(), func(s *state) ([]storeRecord, any, error) {
		if subjectName == "" {
			return []storeRecord{{key: globalKey(keyMode)}}, modeRequest{Mode: s.mode("")}, nil
		}
		sub := s.subjects[subjectName]
		if sub == nil || sub.mode == "" {
			return nil, nil, errSubjectModeNotConfigured(subjectName)
		}
		return []storeRecord{{key: subjectKey(keyMode, subjectName)}}, modeRequest{Mode: sub.mode}, nil
	})
}
