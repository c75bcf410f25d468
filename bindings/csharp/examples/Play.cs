// Play: a player from a C# frame loop, through Rewind.cs and librewind.
//
//   mono play.exe ADDR CERT_SHA256_HEX ROOM NAME TEAM HITS SECONDS [--wait-close]
//
// The C example's twin (examples/c/play.c): it joins ROOM in open
// development mode, aims at the nearest enemy it is shown and fires every
// frame until the server has confirmed HITS of its hits, then leaves; with
// --wait-close, it then plays a second session until the server goes away
// (stop it when the program says so), its frames staying quick meanwhile.
// It exits 0 when all went as it should.
//
// Build and run (Mono, as Unity's scripting runtime):
//   mcs -out:build/play.exe bindings/csharp/Rewind.cs bindings/csharp/examples/Play.cs
//   LD_LIBRARY_PATH=build mono build/play.exe 127.0.0.1:7777 <cert hex> arena cs 2 10 60
using System;
using System.Diagnostics;
using System.Threading;
using Rewind;

static class Play
{
    static int failures;

    static void Check(bool ok, string what)
    {
        if (!ok)
        {
            Console.Error.WriteLine("FAIL: " + what);
            failures++;
        }
    }

    static byte[] Hex(string s)
    {
        var b = new byte[s.Length / 2];
        for (int i = 0; i < b.Length; i++)
            b[i] = Convert.ToByte(s.Substring(2 * i, 2), 16);
        return b;
    }

    // Aim points the intent at the nearest living enemy's chest, and fires.
    static bool Aim(ref Frame f, ref Match m, Player[] players, int n, ref Intent intent)
    {
        double best = double.PositiveInfinity;
        intent = new Intent { Weapon = m.Loadout.Length > 0 ? m.Loadout[0] : (byte)0 };
        for (int i = 0; i < n; i++)
        {
            var p = players[i];
            if (p.Alive == 0 || p.Team == f.Self.Team)
                continue;
            double dx = p.Pos.X - f.Self.Pos.X, dy = p.Pos.Y + 1.0 - (f.Self.Pos.Y + m.EyeHeight), dz = p.Pos.Z - f.Self.Pos.Z;
            double d = Math.Sqrt(dx * dx + dy * dy + dz * dz);
            if (d < best)
            {
                best = d;
                intent.Yaw = Math.Atan2(dx, dz);
                intent.Pitch = Math.Atan2(dy, Math.Sqrt(dx * dx + dz * dz));
                intent.Fire = 1;
            }
        }
        return intent.Fire != 0;
    }

    static void Misuse(Config cfg)
    {
        try
        {
            Session.Connect(new Config());
            Check(false, "Connect without an address did not throw");
        }
        catch (RewindException e)
        {
            Check(e.Result == Result.Argument && e.Message.Contains("addr"), "Connect without an address: " + e.Message);
        }
        var f = new Frame();
        Check((Result)Native.rw_read_frame(0, ref f, null, 0, null, 0) == Result.Handle, "rw_read_frame(0)");
        var s = Session.Connect(cfg);
        Check(s.Close() == Result.Ok, "Close");
        Check(s.Close() == Result.Handle, "Close twice");
        Check(s.ReadFrame(ref f, null, null) == Result.Handle, "ReadFrame after Close");
        var intent = new Intent();
        Check(s.SetIntent(ref intent) == Result.Handle, "SetIntent after Close");
    }

    static int Main(string[] args)
    {
        bool waitClose = args.Length > 7 && args[args.Length - 1] == "--wait-close";
        if (args.Length < 7)
        {
            Console.Error.WriteLine("usage: play.exe ADDR CERT_SHA256_HEX ROOM NAME TEAM HITS SECONDS [--wait-close]");
            return 2;
        }
        var cfg = new Config
        {
            Addr = args[0], CertSha256 = Hex(args[1]), Room = args[2], Name = args[3], Team = byte.Parse(args[4]),
        };
        int want = int.Parse(args[5]);
        double seconds = double.Parse(args[6], System.Globalization.CultureInfo.InvariantCulture);
        // A game's garbage: a thread that allocates and collects all along,
        // so that the runtime's collector stops the threads (with signals,
        // under Boehm) many times while librewind runs.
        var garbage = new Thread(MakeGarbage) { IsBackground = true };
        garbage.Start();
        Misuse(cfg);

        var s = Session.Connect(cfg);
        var players = new Player[64];
        var events = new Event[32];
        var frame = new Frame();
        var match = new Match();
        var intent = new Intent();
        bool haveMatch = false, sawEnemy = false;
        int markers = 0, frames = 0;
        double worst = 0;
        var clock = Stopwatch.StartNew();
        long allocated = -1;
        while (markers < want && clock.Elapsed.TotalSeconds < seconds)
        {
            double t0 = clock.Elapsed.TotalMilliseconds;
            Check(s.ReadFrame(ref frame, players, null) == Result.Ok, "ReadFrame");
            worst = Math.Max(worst, clock.Elapsed.TotalMilliseconds - t0);
            frames++;
            if (frame.Status == Status.Closed)
            {
                Console.Error.WriteLine("play: the session closed: " + s.Error);
                return 1;
            }
            if (frame.Status == Status.Playing && !haveMatch)
                haveMatch = s.ReadMatch(out match) == Result.Ok;
            if (haveMatch && frame.Self.Alive != 0)
            {
                sawEnemy |= Aim(ref frame, ref match, players, Math.Min(frame.Players, players.Length), ref intent);
                s.SetIntent(ref intent);
            }
            int n = s.PollEvents(events);
            for (int i = 0; i < n; i++)
                if (events[i].Kind == EventKind.HitMarker && events[i].Damage > 0)
                    markers++;
            if (haveMatch && allocated < 0 && frames > 50)
                allocated = FrameAllocations(s, players);
            Thread.Sleep(8);
        }
        var st = s.ReadStats();
        Weapon w = new Weapon();
        Check(!haveMatch || s.ReadWeapon(match.Loadout[0], out w) == Result.Ok, "ReadWeapon");
        Console.WriteLine("played: {0} hit markers ({1} hits confirmed of {2} shots), {3} frames, the slowest ReadFrame {4:F3} ms, " +
            "RTT {5:F1} ms, level {6}, weapon {7} ({8}); {9} bytes allocated over 1000 frames",
            markers, st.HitsConfirmed, st.ShotsFired, frames, worst, st.RttMs, match.Level, w.Name, w.Kind, allocated);
        Check(sawEnemy, "no frame showed an enemy");
        Check(markers >= want, string.Format("{0} hit markers in {1} s, want {2}", markers, seconds, want));
        // A snapshot may bring a hit's marker before the control stream's Hit
        // event, which the counter counts: so no more than this.
        Check(st.HitsConfirmed > 0 && st.ShotsFired >= st.HitsConfirmed, "stats: hits confirmed and shots fired disagree");
        Check(allocated == 0, string.Format("{0} bytes allocated over 1000 frames, want 0", allocated));
        s.Dispose();
        if (!waitClose)
            return Finish();

        // A second session, kept until the server goes away.
        cfg.Name += "-2";
        s = Session.Connect(cfg);
        bool playing = false, closed = false;
        worst = 0;
        clock.Restart();
        while (!closed && clock.Elapsed.TotalSeconds < 60)
        {
            double t0 = clock.Elapsed.TotalMilliseconds;
            s.ReadFrame(ref frame, players, null);
            int n = s.PollEvents(events);
            worst = Math.Max(worst, clock.Elapsed.TotalMilliseconds - t0);
            if (frame.Status == Status.Playing && !playing)
            {
                playing = true;
                Console.WriteLine("waiting for the server to go away");
                Console.Out.Flush();
            }
            for (int i = 0; i < n; i++)
            {
                if (events[i].Kind == EventKind.Closed)
                {
                    closed = true;
                    Console.WriteLine("closed: code {0}, \"{1}\" ({2}); the slowest frame meanwhile {3:F3} ms",
                        events[i].Code, events[i].Name, s.Error, worst);
                }
            }
            Thread.Sleep(8);
        }
        Check(closed, "the session never closed after the server went away");
        Check(s.SetIntent(ref intent) == Result.Closed, "SetIntent on a closed session");
        s.Dispose();
        return Finish();
    }

    static int Finish()
    {
        if (failures > 0)
        {
            Console.Error.WriteLine("play: {0} checks failed", failures);
            return 1;
        }
        Console.WriteLine("{0} collections while playing", Volatile.Read(ref collections));
        Console.WriteLine("ok");
        return 0;
    }

    public static object Sink; // kept, so the allocations are not optimized away
    static int collections;

    static void MakeGarbage()
    {
        var rng = new Random(1);
        for (int i = 0; ; i++)
        {
            Sink = new byte[rng.Next(16, 4096)];
            if (i % 20000 == 0)
            {
                GC.Collect();
                Interlocked.Increment(ref collections);
                Thread.Sleep(5);
            }
        }
    }

    // FrameAllocations is how many bytes this thread allocated on the
    // managed heap over 1000 frames of ReadFrame, SetIntent and PollEvents
    // (with no events waiting: their strings are allocated when there are
    // some).
    static long FrameAllocations(Session s, Player[] players)
    {
        var f = new Frame();
        var intent = new Intent();
        var none = new Event[0];
        s.ReadFrame(ref f, players, null);
        s.SetIntent(ref intent);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1000; i++)
        {
            s.ReadFrame(ref f, players, null);
            s.SetIntent(ref intent);
            s.PollEvents(none);
        }
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }
}
