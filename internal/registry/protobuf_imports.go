package registry

// confluentProtoImports are the imports Confluent's Protobuf serializers
// may add to a schema without registering them as references: field and
// message metadata options and the decimal type. They are written here to
// the same package, message and field numbers Confluent's files declare,
// so schemas that import them compile and encode the same way.
var confluentProtoImports = map[string]string{
	"confluent/meta.proto": `syntax = "proto3";
package confluent;

import "google/protobuf/descriptor.proto";

option go_package = "github.com/confluentinc/schema-registry/confluent/meta";

message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}

extend google.protobuf.FileOptions {
  Meta file_meta = 1088;
}
extend google.protobuf.MessageOptions {
  Meta message_meta = 1088;
}
extend google.protobuf.FieldOptions {
  Meta field_meta = 1088;
}
extend google.protobuf.EnumOptions {
  Meta enum_meta = 1088;
}
extend google.protobuf.EnumValueOptions {
  Meta enum_value_meta = 1088;
}
`,
	"confluent/type/decimal.proto": `syntax = "proto3";
package confluent.type;

option go_package = "github.com/confluentinc/schema-registry/confluent/type/decimal";

message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
`,
}
