// Package credential owns a workspace's credentials, its keys to model
// vendors, and its model prices.
//
// A credential's key is write-only: it is sealed when it is stored
// (AES-256-GCM under a key-encryption key of a KeyRing, bound to the
// credential's workspace and id by the associated data, with the key's id
// stored beside the ciphertext) and opened only for the model caller
// (Service.Open, model.Credentials). Answers show a hint of it, never the
// key. The key ring comes from a key file (LoadKeyFile, CreateKeyFile),
// the current key first; RotateKey re-seals every credential under the
// current key, so that older keys can leave the file.
//
// Prices are the bundled catalogue (model.Bundled) and the workspace's
// overrides; Service.Price (model.Prices) gives the price a run's cost is
// computed with.
package credential
