package pgtest

var RemoveLeftovers = removeLeftovers
