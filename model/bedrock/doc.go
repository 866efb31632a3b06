// Package bedrock is the model.Provider for Amazon Bedrock, on the Converse
// and ConverseStream APIs of the AWS SDK for Go v2 (bedrockruntime). It is
// a package of its own so that only the programs that register it link the
// AWS SDK: an embedder registers it for its credentials with
// model.Kinds{canvas.ProviderBedrock: bedrock.Factory}.
//
// A Bedrock credential names its region in settings.region and holds
// either an AWS access key pair, "ACCESS_KEY_ID:SECRET_ACCESS_KEY" or
// "ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN" (requests signed with
// SigV4), or a Bedrock API key (sent as a bearer token). The client is
// built from the credential alone: no AWS configuration file, environment
// variable or instance metadata is read.
package bedrock
