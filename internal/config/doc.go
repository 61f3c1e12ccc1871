// Package config holds Samsa's broker and topic configuration: the key
// tables, loading a broker's configuration, resolving a topic's effective
// configuration, and the DescribeConfigs and IncrementalAlterConfigs rules
// that go with them. Apache Kafka 4.0 is the specification: key names, types,
// defaults, validation, synonyms and config sources are Kafka's, except where
// a key's Doc says "Samsa". The package imports nothing internal.
//
// # Key tables
//
// Every key is defined once, in keys.go (broker) or topic.go (topic), as a
// Key: name, Kafka type, default, validator, documentation, whether it may be
// altered dynamically, and the typed field it fills. Parsing, validation and
// DescribeConfigs are all driven from the tables.
//
// # Broker precedence
//
// Load builds a Broker from, lowest precedence first:
//
//  1. the key defaults (Kafka's, or Samsa's for a zero-config single node:
//     node.id=1, process.roles=broker,controller,
//     listeners=PLAINTEXT://127.0.0.1:9092, log.dir=./samsa-data);
//  2. the server.properties file, if a path is given;
//  3. environment variables SAMSA_<KEY>: the key upper-cased with '.' and
//     '-' as '_' (SAMSA_LOG_DIRS sets log.dirs). They are mapped back through
//     the key table, so keys containing '_' or '-' still map;
//  4. --override key=value arguments, in order.
//
// All of these are "static" (described as STATIC_BROKER_CONFIG). On top of
// them, Broker.WithDynamic applies dynamic cluster defaults
// (DYNAMIC_DEFAULT_BROKER_CONFIG), then dynamic per-broker values
// (DYNAMIC_BROKER_CONFIG). Keys nothing sets are DEFAULT_CONFIG.
//
// An unknown key is a warning, not an error. An invalid value is an error
// naming the key, the value and what was expected, in Kafka's words:
// "Invalid value abc for configuration num.io.threads: Not a number of type
// INT".
//
// Some keys fall back to others, as in Kafka: log.retention.ms, else
// log.retention.minutes, else log.retention.hours; log.roll.ms, else
// log.roll.hours (and the same for jitter); log.flush.interval.ms, else
// log.flush.scheduler.interval.ms; log.dirs, else log.dir;
// advertised.listeners, else listeners. The Broker's derived fields hold the
// result.
//
// # server.properties syntax
//
// The file uses java.util.Properties syntax:
//
//	# comment            a line whose first non-blank is '#' or '!'
//	key=value            separators: '=', ':', or whitespace; blanks
//	key : value          around the separator are ignored
//	key value
//	long.key=first,\     a line ending in an odd number of '\' continues on
//	    second           the next; the next line's leading blanks are dropped
//	path=C:\\data        escapes: \t \n \r \f \uXXXX, and '\' before any
//	key\ with\ space=v   other character stands for that character
//
// Lines end at "\n", "\r\n" or "\r"; a repeated key keeps its last value;
// values are trimmed. One deviation: the file is read as UTF-8, where Java
// reads ISO-8859-1.
//
// # Topics
//
// A topic's effective value for a key is its override, else the broker's
// effective value for the key's synonym (retention.ms <- log.retention.ms,
// which itself falls back as above), else Kafka's topic default.
// ValidateTopicConfigs checks overrides; ResolveTopic returns the typed
// result; DescribeTopic describes it with Kafka's sources and synonyms.
//
// # Errors
//
// Problems with a key or value are *Error values whose Kind is
// ErrUnknownKey, ErrInvalidValue or ErrReadOnly (Kafka's INVALID_CONFIG) or
// ErrInvalidRequest (INVALID_REQUEST); Error() is Kafka's message.
package config
