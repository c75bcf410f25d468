// Package gltf reads the part of glTF 2.0 that a level needs: the default
// scene's node hierarchy with every node's world transform, names and
// extras, and the triangles of the meshes those nodes use. Materials,
// textures, animations, skins and cameras are not read.
//
// It reads .glb (the binary container) and .gltf (JSON, with buffers as
// base64 data: URIs or as files beside it, read through an [fs.FS] and
// never outside it). A file it cannot read whole is refused: every error
// names the node, mesh, primitive, accessor, buffer view or buffer, by
// index and name, and what is wrong with it. Nothing is allocated for a
// count that the bytes actually present do not back, so a small file
// cannot make the reader allocate much more than [Limits] allow.
//
// The specification: "glTF 2.0 Specification", The Khronos Group,
// https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html
package gltf
