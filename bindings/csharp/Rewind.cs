// Rewind.cs: the Rewind client for C# (Unity, Mono, .NET), over librewind.
//
// Drop this file and librewind (librewind.so, rewind.dll, librewind.dylib;
// on iOS the static librewind.a, see docs/engines.md) into the project: in
// Unity, the file under Assets/ and the library under Assets/Plugins/ for
// its platform. Nothing here asks its user for unsafe code.
//
// The API follows rewind.h (cmd/librewind/rewind.h), which says what each
// call does: connect, then every frame SetIntent, ReadFrame and PollEvents;
// Dispose (or Close) to leave. No call blocks on the network, and none
// calls back into C#: the game polls. ReadFrame, SetIntent and PollEvents
// with no events allocate nothing.
using System;
using System.Runtime.InteropServices;
using System.Text;

namespace Rewind
{
    /// <summary>A call's result: Ok, or why it failed.</summary>
    public enum Result
    {
        Ok = 0,
        Argument = 1, // a null, or a field out of range
        Handle = 2,   // not a session: closed, or never one
        Closed = 3,   // the session is over
        NotYet = 4,   // not joined yet
        Internal = 5, // a fault in the library
    }

    /// <summary>Where a session is.</summary>
    public enum Status
    {
        Connecting = 0,
        Playing = 1,
        Closed = 2,
    }

    /// <summary>What an event is.</summary>
    public enum EventKind : byte
    {
        HitMarker = 1, // the player's hit, confirmed: Other is the target
        Damaged = 2,   // the player was hit: Player is the shooter
        Kill = 3,      // Player killed Other (Player 0, Weapon 255: the level)
        Respawn = 4,   // Player is back at Pos, facing Yaw
        Joined = 5,    // Player joined Team as Name
        Left = 6,      // Player left
        Closed = 7,    // the session ended, always last: Code, and Name (the reason)
    }

    /// <summary>A point or a direction: metres, Y up.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Vec3
    {
        public double X, Y, Z;

        public override string ToString() { return string.Format("({0:F2}, {1:F2}, {2:F2})", X, Y, Z); }
    }

    /// <summary>What the player does: sticks in -1..1, aim in radians
    /// (yaw 0 faces +Z and grows toward +X), buttons 0 or 1.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Intent
    {
        public double MoveX, MoveZ, Yaw, Pitch;
        public byte Weapon, Fire, Reload, Jump, Crouch, Sprint;
    }

    /// <summary>The local player as shown.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Self
    {
        public uint Id;
        public byte Team, Alive, Crouched, OnGround;
        public float Health;
        public Vec3 Pos, Vel;
        public double Yaw, Pitch;
    }

    /// <summary>A remote player as shown, in the past (Frame.RenderTime),
    /// where the server judges the local player's shots.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Player
    {
        public uint Id;
        public byte Team, Alive, Crouched, Health;
        public Vec3 Pos;
        public double Yaw, Pitch;
    }

    /// <summary>A projectile (Kind 2: Pos its centre, Vel in m/s) or a
    /// placed shield (Kind 3: Pos its lowest corner, Vel its size).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct WorldObject
    {
        public uint Id, Owner;
        public byte Kind, Team, Weapon;
        public Vec3 Pos, Vel;
    }

    /// <summary>What to draw now.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Frame
    {
        public Status Status;
        public int TickRate;
        public long Tick;
        public double Alpha, RenderTime;
        public Self Self;
        public int Players, Objects; // how many there are: ReadFrame fills the first of them that fit
    }

    /// <summary>A session's counters.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Stats
    {
        public Status Status;
        public double RttMs, SnapshotLoss;
        public uint ServerTick;
        public ulong Ticks, Snapshots, SnapshotsDropped, Corrections, ShotsFired, HitsConfirmed, HitsClamped,
            Kills, Deaths, BytesIn, BytesOut, EventsDropped;
        public double InterpMs;
    }

    /// <summary>Something that happened.</summary>
    public struct Event
    {
        public EventKind Kind;
        public byte Weapon, Flags, Reason, Team;
        public bool ViaSnapshot;
        public ushort Shot;
        public uint Tick, Player, Other;
        public float Damage;
        public Vec3 Pos;
        public double Yaw;
        public ulong Code;
        public string Name;
    }

    /// <summary>The match a session joined.</summary>
    public struct Match
    {
        public uint Player;
        public byte Team;
        public int TickRate, Weapons;
        public double Radius, Height, CrouchHeight, HeadHeight, EyeHeight, CrouchEyeHeight;
        public byte[] Loadout;
        public string Level, Room, Class;
    }

    /// <summary>One weapon of the match.</summary>
    public struct Weapon
    {
        public string Name, Kind;
        public double Damage, Range, Speed, Spread;
        public int Pellets, FireIntervalTicks, Magazine, ReloadTicks;
    }

    /// <summary>Where to connect, who to be, and the level the game holds
    /// (the bytes of its .glb, or null for the built-in arena).</summary>
    public class Config
    {
        public string Addr;
        public string Token;                   // the matchmaker's; null in open development mode
        public string Room, Name, ClassName;   // open development mode
        public byte Team;
        public byte[] CertSha256;              // 32 bytes, as the matchmaker hands it out
        public bool InsecureSkipVerify;        // development on one machine only
        public string LevelName;
        public byte[] LevelData;
        public int InterpDelayMs, DialTimeoutMs, Events;
        public bool QuicDatagramsOnly;
    }

    /// <summary>A call into librewind failed.</summary>
    public class RewindException : Exception
    {
        public readonly Result Result;

        public RewindException(Result r, string message) : base(message) { Result = r; }
    }

    /// <summary>One player's connection to a Rewind server.</summary>
    public sealed class Session : IDisposable
    {
        ulong handle;
        IntPtr events; // the library writes events here
        int eventsCap;

        Session(ulong h, int cap)
        {
            handle = h;
            eventsCap = cap;
            events = Marshal.AllocHGlobal(cap * Marshal.SizeOf(typeof(Native.Event)));
        }

        /// <summary>Checks cfg and starts connecting in the background:
        /// ReadFrame's status says when the player is in.</summary>
        public static Session Connect(Config cfg)
        {
            Native.CheckLayouts();
            var alloc = new Allocations();
            try
            {
                var c = new Native.Config
                {
                    Addr = alloc.Utf8(cfg.Addr), Token = alloc.Utf8(cfg.Token), Room = alloc.Utf8(cfg.Room),
                    Name = alloc.Utf8(cfg.Name), ClassName = alloc.Utf8(cfg.ClassName), Team = cfg.Team,
                    InsecureSkipVerify = cfg.InsecureSkipVerify ? 1 : 0, LevelName = alloc.Utf8(cfg.LevelName),
                    InterpDelayMs = cfg.InterpDelayMs, DialTimeoutMs = cfg.DialTimeoutMs,
                    QuicDatagramsOnly = cfg.QuicDatagramsOnly ? 1 : 0, Events = cfg.Events,
                };
                if (cfg.CertSha256 != null)
                {
                    if (cfg.CertSha256.Length != 32)
                        throw new ArgumentException("Config.CertSha256: want 32 bytes, have " + cfg.CertSha256.Length);
                    c.CertSha256 = alloc.Bytes(cfg.CertSha256);
                }
                if (cfg.LevelData != null)
                {
                    c.LevelData = alloc.Bytes(cfg.LevelData);
                    c.LevelSize = (UIntPtr)cfg.LevelData.Length;
                }
                var err = new byte[512];
                ulong h;
                var r = (Result)Native.rw_connect(ref c, out h, err, (UIntPtr)err.Length);
                if (r != Result.Ok)
                    throw new RewindException(r, "rw_connect: " + CString(err));
                return new Session(h, Math.Max(cfg.Events, 64));
            }
            finally
            {
                alloc.Free();
            }
        }

        /// <summary>Sets what the player does from the next client tick on.</summary>
        public Result SetIntent(ref Intent intent) { return (Result)Native.rw_set_intent(handle, ref intent); }

        /// <summary>Fills frame, and players and objects (either may be
        /// null) with the first remote players and objects that fit;
        /// frame.Players and frame.Objects say how many there are.</summary>
        public Result ReadFrame(ref Frame frame, Player[] players, WorldObject[] objects)
        {
            return (Result)Native.rw_read_frame(handle, ref frame, players, players == null ? 0 : players.Length,
                objects, objects == null ? 0 : objects.Length);
        }

        /// <summary>Moves up to out.Length events to out, oldest first, and
        /// returns how many; Closed comes last, once.</summary>
        public int PollEvents(Event[] output)
        {
            int cap = Math.Min(output.Length, eventsCap), n;
            var r = (Result)Native.rw_poll_events(handle, events, cap, out n);
            if (r != Result.Ok)
                return 0;
            int size = Marshal.SizeOf(typeof(Native.Event));
            for (int i = 0; i < n; i++)
            {
                var e = (Native.Event)Marshal.PtrToStructure(new IntPtr(events.ToInt64() + i * size), typeof(Native.Event));
                output[i] = new Event
                {
                    Kind = (EventKind)e.Kind, Weapon = e.Weapon, Flags = e.Flags, Reason = e.Reason, Team = e.Team,
                    ViaSnapshot = e.ViaSnapshot != 0, Shot = e.Shot, Tick = e.Tick, Player = e.Player, Other = e.Other,
                    Damage = e.Damage, Pos = e.Pos, Yaw = e.Yaw, Code = e.Code, Name = e.Name,
                };
            }
            return n;
        }

        /// <summary>The session's counters.</summary>
        public Stats ReadStats()
        {
            var st = new Stats();
            Native.rw_read_stats(handle, ref st);
            return st;
        }

        /// <summary>The match joined, once the session plays.</summary>
        public Result ReadMatch(out Match match)
        {
            var m = new Native.Match();
            var r = (Result)Native.rw_read_match(handle, ref m);
            match = new Match
            {
                Player = m.Player, Team = m.Team, TickRate = m.TickRate, Weapons = m.Weapons, Radius = m.Radius,
                Height = m.Height, CrouchHeight = m.CrouchHeight, HeadHeight = m.HeadHeight, EyeHeight = m.EyeHeight,
                CrouchEyeHeight = m.CrouchEyeHeight, Level = m.Level, Room = m.Room, Class = m.ClassName,
                Loadout = new byte[Math.Max(0, Math.Min(m.LoadoutCount, 8))],
            };
            if (m.Loadout != null)
                Array.Copy(m.Loadout, match.Loadout, match.Loadout.Length);
            return r;
        }

        /// <summary>Weapon id's rules, once the session plays.</summary>
        public Result ReadWeapon(int id, out Weapon weapon)
        {
            var w = new Native.Weapon();
            var r = (Result)Native.rw_read_weapon(handle, id, ref w);
            weapon = new Weapon
            {
                Name = w.Name, Kind = w.Kind, Damage = w.Damage, Range = w.HitRange, Speed = w.Speed, Spread = w.Spread,
                Pellets = w.Pellets, FireIntervalTicks = w.FireIntervalTicks, Magazine = w.Magazine, ReloadTicks = w.ReloadTicks,
            };
            return r;
        }

        /// <summary>Why a closed session ended ("" while it plays, or when
        /// Close ended it).</summary>
        public string Error
        {
            get
            {
                var buf = new byte[1024];
                UIntPtr len;
                Native.rw_session_error(handle, buf, (UIntPtr)buf.Length, out len);
                return CString(buf);
            }
        }

        /// <summary>Leaves the match (in the background) and frees the
        /// session; later calls return Result.Handle.</summary>
        public Result Close()
        {
            var r = (Result)Native.rw_close(handle);
            if (events != IntPtr.Zero)
            {
                Marshal.FreeHGlobal(events);
                events = IntPtr.Zero;
                eventsCap = 0;
            }
            return r;
        }

        public void Dispose() { Close(); }

        /// <summary>The handle, for the rare call this class does not wrap.</summary>
        public ulong Handle { get { return handle; } }

        static string CString(byte[] b)
        {
            int n = Array.IndexOf(b, (byte)0);
            return Encoding.UTF8.GetString(b, 0, n < 0 ? b.Length : n);
        }

        /// <summary>Unmanaged copies made for one call, freed after it.</summary>
        sealed class Allocations
        {
            readonly System.Collections.Generic.List<IntPtr> ptrs = new System.Collections.Generic.List<IntPtr>();

            public IntPtr Utf8(string s)
            {
                if (s == null)
                    return IntPtr.Zero;
                var b = Encoding.UTF8.GetBytes(s);
                var p = Marshal.AllocHGlobal(b.Length + 1);
                Marshal.Copy(b, 0, p, b.Length);
                Marshal.WriteByte(p, b.Length, 0);
                ptrs.Add(p);
                return p;
            }

            public IntPtr Bytes(byte[] b)
            {
                var p = Marshal.AllocHGlobal(Math.Max(b.Length, 1));
                Marshal.Copy(b, 0, p, b.Length);
                ptrs.Add(p);
                return p;
            }

            public void Free()
            {
                foreach (var p in ptrs)
                    Marshal.FreeHGlobal(p);
                ptrs.Clear();
            }
        }
    }

    /// <summary>The C ABI, as rewind.h declares it.</summary>
    public static class Native
    {
        // "rewind": librewind.so on Linux and Android, rewind.dll on
        // Windows, librewind.dylib on macOS; on iOS, where librewind is
        // linked statically, Unity needs "__Internal" (docs/engines.md).
        public const string Library = "rewind";
        public const int ApiVersion = 1;

        [StructLayout(LayoutKind.Sequential)]
        internal struct Config
        {
            public IntPtr Addr, Token, Room, Name, ClassName;
            public byte Team;
            public IntPtr CertSha256;
            public int InsecureSkipVerify;
            public IntPtr LevelName, LevelData;
            public UIntPtr LevelSize;
            public int InterpDelayMs, DialTimeoutMs, QuicDatagramsOnly, Events;
        }

        [StructLayout(LayoutKind.Sequential, CharSet = CharSet.Ansi)]
        internal struct Event
        {
            public byte Kind, Weapon, Flags, Reason, ViaSnapshot, Team;
            public ushort Shot;
            public uint Tick, Player, Other;
            public float Damage;
            public Vec3 Pos;
            public double Yaw;
            public ulong Code;
            [MarshalAs(UnmanagedType.ByValTStr, SizeConst = 64)] public string Name;
        }

        [StructLayout(LayoutKind.Sequential, CharSet = CharSet.Ansi)]
        internal struct Match
        {
            public uint Player;
            public byte Team;
            public int TickRate;
            public double Radius, Height, CrouchHeight, HeadHeight, EyeHeight, CrouchEyeHeight;
            public int Weapons, LoadoutCount;
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = 8)] public byte[] Loadout;
            [MarshalAs(UnmanagedType.ByValTStr, SizeConst = 64)] public string Level;
            [MarshalAs(UnmanagedType.ByValTStr, SizeConst = 64)] public string Room;
            [MarshalAs(UnmanagedType.ByValTStr, SizeConst = 64)] public string ClassName;
        }

        [StructLayout(LayoutKind.Sequential, CharSet = CharSet.Ansi)]
        internal struct Weapon
        {
            [MarshalAs(UnmanagedType.ByValTStr, SizeConst = 32)] public string Name;
            [MarshalAs(UnmanagedType.ByValTStr, SizeConst = 16)] public string Kind;
            public double Damage, HitRange, Speed, Spread;
            public int Pellets, FireIntervalTicks, Magazine, ReloadTicks;
        }

        [DllImport(Library)] public static extern int rw_api_version();
        [DllImport(Library)] public static extern int rw_struct_size(int id);
        [DllImport(Library)] internal static extern int rw_connect(ref Config cfg, out ulong session, byte[] err, UIntPtr errSize);
        [DllImport(Library)] public static extern int rw_set_intent(ulong s, ref Intent intent);
        [DllImport(Library)]
        public static extern int rw_read_frame(ulong s, ref Frame f, [In, Out] Player[] players, int playersCap,
            [In, Out] WorldObject[] objects, int objectsCap);
        [DllImport(Library)] public static extern int rw_poll_events(ulong s, IntPtr events, int cap, out int n);
        [DllImport(Library)] public static extern int rw_read_stats(ulong s, ref Stats st);
        [DllImport(Library)] internal static extern int rw_read_match(ulong s, ref Match m);
        [DllImport(Library)] internal static extern int rw_read_weapon(ulong s, int id, ref Weapon w);
        [DllImport(Library)] public static extern int rw_session_error(ulong s, byte[] buf, UIntPtr size, out UIntPtr len);
        [DllImport(Library)] public static extern int rw_close(ulong s);

        static bool checkedLayouts;

        /// <summary>Checks that the library is this binding's version and
        /// that every struct has the size the library was built with.</summary>
        public static void CheckLayouts()
        {
            if (checkedLayouts)
                return;
            int v = rw_api_version();
            if (v != ApiVersion)
                throw new RewindException(Result.Argument, string.Format("librewind is API version {0}, this binding {1}", v, ApiVersion));
            var types = new Type[] { typeof(Config), typeof(Intent), typeof(Self), typeof(Player), typeof(WorldObject), typeof(Frame),
                typeof(Event), typeof(Stats), typeof(Match), typeof(Weapon) };
            for (int i = 0; i < types.Length; i++)
            {
                int want = rw_struct_size(i + 1), have = Marshal.SizeOf(types[i]);
                if (want != have)
                    throw new RewindException(Result.Argument,
                        string.Format("{0} is {1} bytes here and {2} in librewind: the binding does not match the library", types[i].Name, have, want));
            }
            checkedLayouts = true;
        }
    }
}
