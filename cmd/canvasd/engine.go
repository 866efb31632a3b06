package main

import (
	"log/slog"

	"github.com/promptcanvas/promptcanvas/engine"
)

// engineOptions turns the configuration into the engine's options; the
// data directory and the store are OpenSQLite's.
func engineOptions(cfg config, logger *slog.Logger) (engine.Options, error) {
	reg, err := providers(cfg)
	if err != nil {
		return engine.Options{}, err
	}
	return engine.Options{
		Providers:     reg,
		ProviderKinds: providerKinds(),
		BaseURL:       cfg.BaseURL,
		Logger:        logger,
		Limits: engine.Limits{
			ModelConcurrency:               cfg.WorkerConcurrency,
			DeliveryConcurrency:            cfg.DeliveryConcurrency,
			MaxFileSize:                    cfg.MaxFileSize,
			UploadURLLifetime:              cfg.UploadURLLifetime,
			AllowPrivateNetworks:           cfg.AllowPrivateNetworks,
			MaxConsecutiveDeliveryFailures: cfg.MaxConsecutiveFailures,
			SecretOverlap:                  cfg.SecretOverlap,
			Retention: engine.Retention{Jobs: cfg.JobRetention, Deliveries: cfg.DeliveryRetention,
				Runs: cfg.RunRetention, WorkflowRuns: cfg.WorkflowRunRetention, AuditEvents: cfg.AuditRetention,
				Interval: cfg.PurgeInterval},
		},
	}, nil
}
