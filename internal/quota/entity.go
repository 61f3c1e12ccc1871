package quota

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
)

// Entity types, as DescribeClientQuotas and AlterClientQuotas name them.
const (
	TypeUser     = "user"
	TypeClientID = "client-id"
	TypeIP       = "ip"
)

// Quota keys, Kafka's names.
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
	ConnectionCreationRate = "connection_creation_rate"
)

// PartKind says whether an entity names a type, and how.
type PartKind uint8

// Part kinds.
const (
	// Absent: the entity does not name this type.
	Absent PartKind = iota
	// Default: the entity is the default of this type (a null name).
	Default
	// Named: the entity names one user, client id or IP.
	Named
)

// Part is one type's component of an entity.
// Invariant: Name is empty unless Kind is Named.
type Part struct {
	Kind PartKind
	Name string
}

// NamedPart is a part naming name.
func NamedPart(name string) Part { return Part{Kind: Named, Name: name} }

// DefaultPart is the default of a type.
var DefaultPart = Part{Kind: Default}

// Entity is a quota entity. It is comparable and used as a map key.
type Entity struct {
	User     Part
	ClientID Part
	IP       Part
}

// Component is one (type, name) pair of an entity on the wire; a nil Name
// is the type's default.
type Component struct {
	Type string
	Name *string
}

// Components lists the entity's parts in a fixed order (user, client-id,
// ip).
func (e Entity) Components() []Component {
	var out []Component
	add := func(typ string, p Part) {
		switch p.Kind {
		case Default:
			out = append(out, Component{Type: typ})
		case Named:
			name := p.Name
			out = append(out, Component{Type: typ, Name: &name})
		}
	}
	add(TypeUser, e.User)
	add(TypeClientID, e.ClientID)
	add(TypeIP, e.IP)
	return out
}

// Part returns the entity's part of type typ.
func (e Entity) Part(typ string) Part {
	switch typ {
	case TypeUser:
		return e.User
	case TypeClientID:
		return e.ClientID
	case TypeIP:
		return e.IP
	}
	return Part{}
}

// Size is how many types the entity names.
func (e Entity) Size() int {
	n := 0
	for _, p := range []Part{e.User, e.ClientID, e.IP} {
		if p.Kind != Absent {
			n++
		}
	}
	return n
}

// String renders the entity as Kafka's ClientQuotaEntity does in its error
// messages, with the types in alphabetical order.
func (e Entity) String() string {
	var parts []string
	for _, c := range e.Components() {
		name := "null"
		if c.Name != nil {
			name = *c.Name
		}
		parts = append(parts, c.Type+"="+name)
	}
	sort.Strings(parts)
	return "ClientQuotaEntity(entries={" + strings.Join(parts, ", ") + "})"
}

// Error is a rejected quota entity or value: Kafka answers INVALID_REQUEST
// with Message, or UNSUPPORTED_VERSION when Unsupported is set.
type Error struct {
	Message     string
	Unsupported bool
}

func (e *Error) Error() string { return e.Message }

func invalid(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

// EntityFromComponents builds and checks the entity of an alteration as
// Kafka's controller does: a type named twice keeps its last name (Kafka
// reads the list into a map), an unknown type, an empty name, a bad IP or
// an IP combined with another type is rejected.
func EntityFromComponents(components []Component) (Entity, *Error) {
	var e Entity
	if len(components) == 0 {
		return e, invalid("Invalid empty client quota entity")
	}
	for _, c := range components {
		part := DefaultPart
		if c.Name != nil {
			part = NamedPart(*c.Name)
		}
		switch c.Type {
		case TypeUser:
			e.User = part
		case TypeClientID:
			e.ClientID = part
		case TypeIP:
			e.IP = part
		default:
			return e, invalid("Unhandled client quota entity type: %s", c.Type)
		}
	}
	for _, c := range components {
		if c.Name != nil && *c.Name == "" {
			return e, invalid("Empty %s not supported", c.Type)
		}
	}
	if e.IP.Kind != Absent {
		if e.User.Kind != Absent || e.ClientID.Kind != Absent {
			return e, invalid("Invalid quota entity combination, IP entity should" +
				"not be combined with User or ClientId")
		}
		if e.IP.Kind == Named {
			addr, err := netip.ParseAddr(e.IP.Name)
			if err != nil {
				return e, invalid("%s is not a valid IP or resolvable host.", e.IP.Name)
			}
			// One spelling per address, as the connection path looks it up.
			e.IP.Name = addr.Unmap().String()
		}
	}
	return e, nil
}

// valueType is a quota key's ConfigDef type in Kafka.
type valueType uint8

const (
	typeLong valueType = iota
	typeDouble
	typeInt
)

// clientKeys are the keys of user and client-id entities; ipKeys of IP
// entities.
var (
	clientKeys = map[string]valueType{
		ProducerByteRate:       typeLong,
		ConsumerByteRate:       typeLong,
		RequestPercentage:      typeDouble,
		ControllerMutationRate: typeDouble,
	}
	ipKeys = map[string]valueType{
		ConnectionCreationRate: typeInt,
	}
)

// Keys lists the quota keys an entity of these types accepts, sorted.
func Keys(e Entity) []string {
	keys := clientKeys
	if e.IP.Kind != Absent {
		keys = ipKeys
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckValue checks a quota value being set as Kafka 4.4's controller does:
// the key must belong to the entity's types, the value must be finite and
// positive, and the integral keys must hold an integer that fits their
// type.
func CheckValue(e Entity, key string, value float64) *Error {
	keys := clientKeys
	if e.IP.Kind != Absent {
		keys = ipKeys
	}
	typ, ok := keys[key]
	if !ok {
		return invalid("Invalid configuration key %s", key)
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return invalid("Quota %s must be a finite number", key)
	}
	if value <= 0 {
		return invalid("Quota %s must be greater than 0", key)
	}
	switch typ {
	case typeLong:
		if value >= math.MaxInt64 {
			return invalid("Proposed value for %s is too large for a LONG.", key)
		}
	case typeInt:
		if value > math.MaxInt32 {
			return invalid("Proposed value for %s is too large for an INT.", key)
		}
	default:
		return nil
	}
	if value != math.Trunc(value) {
		return invalid("%s cannot be a fractional value.", key)
	}
	return nil
}

// UserOfPrincipal is the quota user of a principal "User:<name>": the name,
// so the anonymous principal is user "ANONYMOUS" as in Kafka.
func UserOfPrincipal(principal string) string {
	if name, ok := strings.CutPrefix(principal, "User:"); ok {
		return name
	}
	return principal
}
