package registry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	// The well-known types, so a base64 FileDescriptorProto importing them
	// resolves against the global registry.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// protobufSchema is a .proto file compiled by protocompile (text) or
// decoded from a base64 FileDescriptorProto.
type protobufSchema struct {
	text string
	file protoreflect.FileDescriptor
}

// rootProtoName is the file name the registered schema compiles as.
const rootProtoName = "schema.registry.root.proto"

func parseProtobuf(text string, dependencies []dependency) (parsedSchema, error) {
	sources := map[string]string{}
	for name, source := range confluentProtoImports {
		sources[name] = source
	}
	for _, dep := range dependencies {
		if dep.SchemaType == typeProtobuf {
			sources[dep.Name] = dep.Schema
		}
	}
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil, errors.New("empty protobuf schema")
	}
	if descriptorBytes, err := base64.StdEncoding.DecodeString(trimmed); err == nil && !strings.ContainsAny(trimmed, " \n;{") {
		file, err := protobufFromDescriptor(descriptorBytes, sources)
		if err != nil {
			return nil, err
		}
		return &protobufSchema{text: trimmed, file: file}, nil
	}
	sources[rootProtoName] = text
	file, err := compileProto(rootProtoName, sources)
	if err != nil {
		return nil, err
	}
	return &protobufSchema{text: trimmed, file: file}, nil
}

func compileProto(name string, sources map[string]string) (file protoreflect.FileDescriptor, err error) {
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if source, ok := sources[path]; ok {
					return io.NopCloser(strings.NewReader(source)), nil
				}
				return nil, fmt.Errorf("import %q is not a reference of this schema", path)
			},
		}),
	}
	files, err := compiler.Compile(context.Background(), name)
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

// protobufFromDescriptor builds a file from a serialized
// FileDescriptorProto, resolving its imports among the references (compiled
// from their text) and the well-known types.
func protobufFromDescriptor(descriptorBytes []byte, sources map[string]string) (protoreflect.FileDescriptor, error) {
	var fileProto descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(descriptorBytes, &fileProto); err != nil {
		return nil, fmt.Errorf("base64 FileDescriptorProto: %w", err)
	}
	files := new(protoregistry.Files)
	var register func(name string) error
	register = func(name string) error {
		if _, err := files.FindFileByPath(name); err == nil {
			return nil
		}
		if global, err := protoregistry.GlobalFiles.FindFileByPath(name); err == nil {
			return files.RegisterFile(global)
		}
		if _, ok := sources[name]; !ok {
			return fmt.Errorf("import %q is not a reference of this schema", name)
		}
		compiled, err := compileProto(name, sources)
		if err != nil {
			return err
		}
		imports := compiled.Imports()
		for i := 0; i < imports.Len(); i++ {
			if err := register(imports.Get(i).Path()); err != nil {
				return err
			}
		}
		return files.RegisterFile(compiled)
	}
	for _, name := range fileProto.GetDependency() {
		if err := register(name); err != nil {
			return nil, err
		}
	}
	return protodesc.NewFile(&fileProto, files)
}

func (s *protobufSchema) canonical() string { return s.text }

// readIssues applies Confluent's Protobuf change rules to the change from
// writer to this schema. A forward check applies them to the reverse
// change, as Confluent does, so adding a message type (removed, in
// reverse) is backward but not forward compatible.
func (s *protobufSchema) readIssues(writer parsedSchema) []string {
	old, ok := writer.(*protobufSchema)
	if !ok {
		return []string{"schema type changed"}
	}
	var issues []string
	if old.file.Package() != s.file.Package() {
		issues = append(issues, fmt.Sprintf("PACKAGE_CHANGED: %s to %s", old.file.Package(), s.file.Package()))
	}
	oldMessages, newMessages := messagesByName(old.file), messagesByName(s.file)
	for name, oldMessage := range oldMessages {
		newMessage, ok := newMessages[name]
		if !ok {
			issues = append(issues, "MESSAGE_REMOVED: "+name)
			continue
		}
		issues = append(issues, compareMessages(oldMessage, newMessage)...)
	}
	return issues
}

func messagesByName(file protoreflect.FileDescriptor) map[string]protoreflect.MessageDescriptor {
	out := map[string]protoreflect.MessageDescriptor{}
	var walk func(messages protoreflect.MessageDescriptors)
	walk = func(messages protoreflect.MessageDescriptors) {
		for i := 0; i < messages.Len(); i++ {
			message := messages.Get(i)
			if message.IsMapEntry() {
				continue
			}
			out[string(message.FullName())] = message
			walk(message.Messages())
		}
	}
	walk(file.Messages())
	return out
}

// wireGroups are the scalar kinds that share an encoding, between which
// Confluent accepts a change (string and bytes are also interchangeable).
var wireGroups = map[protoreflect.Kind]int{
	protoreflect.Int32Kind: 1, protoreflect.Uint32Kind: 1, protoreflect.Int64Kind: 1, protoreflect.Uint64Kind: 1, protoreflect.BoolKind: 1,
	protoreflect.Sint32Kind: 2, protoreflect.Sint64Kind: 2,
	protoreflect.Fixed32Kind: 3, protoreflect.Sfixed32Kind: 3,
	protoreflect.Fixed64Kind: 4, protoreflect.Sfixed64Kind: 4,
	protoreflect.StringKind: 5, protoreflect.BytesKind: 5,
	protoreflect.FloatKind: 6, protoreflect.DoubleKind: 7,
}

func compareMessages(old, updated protoreflect.MessageDescriptor) []string {
	var issues []string
	name := string(old.FullName())
	oldFields, newFields := old.Fields(), updated.Fields()
	for i := 0; i < oldFields.Len(); i++ {
		oldField := oldFields.Get(i)
		newField := newFields.ByNumber(oldField.Number())
		if newField == nil {
			if oldField.Cardinality() == protoreflect.Required {
				issues = append(issues, fmt.Sprintf("REQUIRED_FIELD_REMOVED: %s field %d", name, oldField.Number()))
			}
			continue // FIELD_REMOVED is compatible
		}
		issues = append(issues, compareFields(name, oldField, newField)...)
	}
	for i := 0; i < newFields.Len(); i++ {
		newField := newFields.Get(i)
		if oldFields.ByNumber(newField.Number()) == nil && newField.Cardinality() == protoreflect.Required {
			issues = append(issues, fmt.Sprintf("REQUIRED_FIELD_ADDED: %s field %d", name, newField.Number()))
		}
	}
	issues = append(issues, compareOneofs(name, old, updated)...)
	return issues
}

func compareFields(message string, old, updated protoreflect.FieldDescriptor) []string {
	where := fmt.Sprintf("%s field %d", message, old.Number())
	oldKind, newKind := kindClass(old), kindClass(updated)
	if oldKind != newKind {
		return []string{"FIELD_KIND_CHANGED: " + where}
	}
	var issues []string
	switch oldKind {
	case "scalar":
		if old.Kind() != updated.Kind() && wireGroups[old.Kind()] != wireGroups[updated.Kind()] {
			issues = append(issues, fmt.Sprintf("FIELD_SCALAR_KIND_CHANGED: %s %s to %s", where, old.Kind(), updated.Kind()))
		}
	case "message":
		if old.Message().FullName() != updated.Message().FullName() {
			issues = append(issues, "FIELD_NAMED_TYPE_CHANGED: "+where)
		}
	case "enum":
		if old.Enum().FullName() != updated.Enum().FullName() {
			issues = append(issues, "FIELD_NAMED_TYPE_CHANGED: "+where)
		}
	case "map":
		if old.MapKey().Kind() != updated.MapKey().Kind() || kindClass(old.MapValue()) != kindClass(updated.MapValue()) {
			issues = append(issues, "FIELD_KIND_CHANGED: "+where)
		}
	}
	if (old.Cardinality() == protoreflect.Repeated) != (updated.Cardinality() == protoreflect.Repeated) && oldKind != "map" {
		lengthDelimited := old.Kind() == protoreflect.StringKind || old.Kind() == protoreflect.BytesKind || old.Kind() == protoreflect.MessageKind
		if !lengthDelimited {
			issues = append(issues, "FIELD_NUMERIC_LABEL_CHANGED: "+where)
		}
	}
	return issues
}

func kindClass(field protoreflect.FieldDescriptor) string {
	switch {
	case field.IsMap():
		return "map"
	case field.Kind() == protoreflect.MessageKind || field.Kind() == protoreflect.GroupKind:
		return "message"
	case field.Kind() == protoreflect.EnumKind:
		return "enum"
	}
	return "scalar"
}

// compareOneofs applies the oneof rules: removing a oneof, moving a field
// into an existing oneof, or moving several fields into a new one breaks
// readers; adding a oneof of one formerly plain field, or adding or
// removing a field of a oneof, does not.
func compareOneofs(message string, old, updated protoreflect.MessageDescriptor) []string {
	var issues []string
	oldOneofs := realOneofs(old)
	newOneofs := realOneofs(updated)
	for name, oldFields := range oldOneofs {
		newFields, ok := newOneofs[name]
		if !ok {
			issues = append(issues, fmt.Sprintf("ONEOF_REMOVED: %s oneof %s", message, name))
			continue
		}
		for number := range newFields {
			if !oldFields[number] && old.Fields().ByNumber(number) != nil {
				issues = append(issues, fmt.Sprintf("FIELD_MOVED_TO_EXISTING_ONEOF: %s field %d", message, number))
			}
		}
	}
	for name, newFields := range newOneofs {
		if _, existed := oldOneofs[name]; existed {
			continue
		}
		moved := 0
		for number := range newFields {
			if old.Fields().ByNumber(number) != nil {
				moved++
			}
		}
		if moved > 1 {
			issues = append(issues, fmt.Sprintf("MULTIPLE_FIELDS_MOVED_TO_ONEOF: %s oneof %s", message, name))
		}
	}
	return issues
}

func realOneofs(message protoreflect.MessageDescriptor) map[string]map[protoreflect.FieldNumber]bool {
	out := map[string]map[protoreflect.FieldNumber]bool{}
	oneofs := message.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		oneof := oneofs.Get(i)
		if oneof.IsSynthetic() {
			continue
		}
		fields := map[protoreflect.FieldNumber]bool{}
		for j := 0; j < oneof.Fields().Len(); j++ {
			fields[oneof.Fields().Get(j).Number()] = true
		}
		out[string(oneof.Name())] = fields
	}
	return out
}
