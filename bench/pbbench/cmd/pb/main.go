// Command pb is PocketBase (v0.36.8, unchanged) with one more command,
// seed, for the benchmark of bench/pbbench:
//
//	pb --dir /tmp/pb_data seed 300000
//	pb --dir /tmp/pb_data serve --http 127.0.0.1:8090
//
// seed creates a base collection "items" that anyone may list (list
// rule "") with the fields of a help-desk record, about 200 bytes of
// JSON each, and inserts N records with ids as PocketBase makes them
// (15 random characters of [a-z0-9]) by raw SQL in one transaction:
// PocketBase's own record saves take minutes for 300,000. serve is
// PocketBase's, with the first-run installer (which opens a browser)
// turned off.
package main

import (
	"fmt"
	"log"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/pocketbase/pocketbase"
	"github.com/pocketbase/pocketbase/core"
	"github.com/spf13/cobra"
)

func main() {
	app := pocketbase.New()
	app.OnServe().BindFunc(func(e *core.ServeEvent) error {
		e.InstallerFunc = nil
		return e.Next()
	})
	app.RootCmd.AddCommand(&cobra.Command{
		Use:   "seed N",
		Short: `creates the collection "items" with N records`,
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return fmt.Errorf("seed: %q is not a number of records", args[0])
			}
			return seed(app, n)
		},
	})
	if err := app.Start(); err != nil {
		log.Fatal(err)
	}
}

// seed makes the collection and its n records. Ids come from a seeded
// generator, so a list of n is the same list on every machine.
func seed(app core.App, n int) error {
	if _, err := app.FindCollectionByNameOrId("items"); err == nil {
		return fmt.Errorf(`seed: the collection "items" exists already in %s`, app.DataDir())
	}
	c := core.NewBaseCollection("items")
	public := ""
	c.ListRule, c.ViewRule = &public, &public
	c.Fields.Add(
		&core.TextField{Name: "subject"},
		&core.TextField{Name: "status"},
		&core.NumberField{Name: "priority"},
		&core.TextField{Name: "requester"},
		&core.TextField{Name: "channel"},
		&core.AutodateField{Name: "created", OnCreate: true},
		&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
	)
	if err := app.Save(c); err != nil {
		return fmt.Errorf("seed: creating the collection: %w", err)
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(40, uint64(n)))
	statuses := []string{"new", "open", "pending", "resolved", "closed"}
	channels := []string{"email", "chat", "phone", "web", "api"}
	subjects := []string{"Cannot log in to the portal", "Invoice shows the wrong amount",
		"Export to CSV times out", "Password reset mail never arrives", "Feature request: dark mode"}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return app.RunInTransaction(func(tx core.App) error {
		q := tx.DB().NewQuery("INSERT INTO items (id, subject, status, priority, requester, channel, created, updated) " +
			"VALUES ({:id}, {:subject}, {:status}, {:priority}, {:requester}, {:channel}, {:created}, {:updated})")
		q.Prepare()
		defer q.Close()
		id := make([]byte, 15)
		for i := range n {
			for j := range id {
				id[j] = alphabet[r.IntN(len(alphabet))]
			}
			at := start.Add(time.Duration(i) * 97 * time.Second).Format("2006-01-02 15:04:05.000Z")
			if _, err := q.Bind(map[string]any{
				"id":        string(id),
				"subject":   fmt.Sprintf("%s (#%d)", subjects[r.IntN(len(subjects))], i+1),
				"status":    statuses[r.IntN(len(statuses))],
				"priority":  1 + r.IntN(4),
				"requester": fmt.Sprintf("customer%d@example.com", r.IntN(50000)),
				"channel":   channels[r.IntN(len(channels))],
				"created":   at,
				"updated":   at,
			}).Execute(); err != nil {
				return fmt.Errorf("seed: record %d (id %s): %w", i+1, id, err)
			}
		}
		return nil
	})
}
