// Package openb reads the Alibaba "openb" node and pod CSVs (the traces of
// the FGD paper) into the packing policy's terms: placement.Node and
// placement.Pod, validated as they are read.
//
// It performs no scheduling and imports only internal/placement, for those
// types. Start with ReadNodes and ReadPods in openb.go.
package openb
