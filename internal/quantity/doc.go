// Package quantity reads the resource quantities users write in fleet and
// job files: CPU in cores or millicores, memory with a binary unit, GPU
// memory also in the GB of GPU model names. It
// imports only the standard library.
package quantity
