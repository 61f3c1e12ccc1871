package group

// offsetCommitter is who an OffsetCommit or TxnOffsetCommit says commits,
// as the group validates it (Kafka's Group.validateOffsetCommit arguments).
//
// OffsetCommit v0 and TxnOffsetCommit v0-v2 carry no member: generation is
// -1 and memberID empty. A classic group's generation and a consumer
// group's member epoch both arrive in generation.
type offsetCommitter struct {
	memberID   string
	instanceID *string
	generation int32
	// transactional marks a TxnOffsetCommit: its group metadata is
	// optional (the legacy AddOffsetsToTxn form names the group alone), and
	// the group's state does not gate it.
	transactional bool
	// version is the request's API version.
	version int16
}
