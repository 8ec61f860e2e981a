// Test harness around the seed post's method (seed_method.cs, inserted verbatim where the marker
// stands by tests/oracle/csharp.py). Modes:
//   batch                  stdin: one case a line, the method's 11 arguments as integers separated by
//                          spaces (playerAWon 1 or 0); stdout: "newRatingA newRatingB" a line.
//   replay FILE INITIAL    FILE: a match-history CSV (gzipped or not, the project's columns, no draws);
//                          every player starts at INITIAL; rows where a player plays themself are
//                          left out (the project's reader rejects them); stdout: "#self_play<TAB>n"
//                          (rows left out), then "playerId<TAB>rating" a line, in order of first
//                          appearance.
using System;
using System.Collections.Generic;
using System.IO;
using System.IO.Compression;

// Unity's Mathf as the game client uses it: Min(a, b) = a < b ? a : b; Clamp tests the lower bound first.
public static class Mathf
{
    public static float Min(float a, float b) { return a < b ? a : b; }
    public static float Clamp(float value, float min, float max)
    {
        if (value < min) value = min;
        else if (value > max) value = max;
        return value;
    }
    // Used only by the "float64" variant (the method with every float turned into double).
    public static double Min(double a, double b) { return a < b ? a : b; }
    public static double Clamp(double value, double min, double max)
    {
        if (value < min) value = min;
        else if (value > max) value = max;
        return value;
    }
}

public static class SeedPost
{
//@@SEED_METHOD@@
}

public static class Harness
{
    public static int Main(string[] args)
    {
        var output = new StreamWriter(Console.OpenStandardOutput(), new System.Text.UTF8Encoding(false), 1 << 16);
        output.AutoFlush = false;
        int status = args.Length > 0 && args[0] == "batch" ? Batch(output)
            : args.Length == 3 && args[0] == "replay" ? Replay(args[1], int.Parse(args[2]), output)
            : Usage();
        output.Flush();
        return status;
    }

    static int Usage()
    {
        Console.Error.WriteLine("usage: oracle.exe batch | oracle.exe replay FILE INITIAL_RATING");
        return 2;
    }

    static int Batch(StreamWriter output)
    {
        var input = new StreamReader(Console.OpenStandardInput(), System.Text.Encoding.ASCII, false, 1 << 16);
        string line;
        int n = 0;
        while ((line = input.ReadLine()) != null)
        {
            n++;
            if (line.Length == 0) continue;
            string[] f = line.Split(' ');
            if (f.Length != 11)
            {
                Console.Error.WriteLine("line " + n + ": expected 11 integers, got " + f.Length);
                return 2;
            }
            int ratingA = int.Parse(f[0]);
            int ratingB = int.Parse(f[1]);
            SeedPost.CalculateNewRatings(ref ratingA, ref ratingB, f[2] == "1",
                int.Parse(f[3]), int.Parse(f[4]), int.Parse(f[5]), int.Parse(f[6]),
                int.Parse(f[7]), int.Parse(f[8]), int.Parse(f[9]), int.Parse(f[10]));
            output.Write(ratingA);
            output.Write(' ');
            output.Write(ratingB);
            output.Write('\n');
        }
        return 0;
    }

    static int Replay(string path, int initial, StreamWriter output)
    {
        Stream raw = File.OpenRead(path);
        int b0 = raw.ReadByte(), b1 = raw.ReadByte();
        raw.Seek(0, SeekOrigin.Begin);
        Stream stream = b0 == 0x1f && b1 == 0x8b ? new GZipStream(raw, CompressionMode.Decompress) : raw;
        var reader = new StreamReader(stream, System.Text.Encoding.UTF8, false, 1 << 16);
        string[] header = reader.ReadLine().Split(',');
        string[] names = { "player_a", "player_b", "winner", "bad_moves_a", "bad_moves_b", "won_by_16_a",
            "won_by_16_b", "won_by_24_a", "won_by_24_b", "won_by_4_and_last_a", "won_by_4_and_last_b" };
        int[] col = new int[names.Length];
        for (int i = 0; i < names.Length; i++)
        {
            col[i] = Array.IndexOf(header, names[i]);
            if (col[i] < 0) { Console.Error.WriteLine("missing column " + names[i]); return 2; }
        }
        var ratings = new Dictionary<string, int>();
        var order = new List<string>();
        string line;
        int lineNo = 1;
        int[] c = new int[8];
        int selfPlay = 0;
        while ((line = reader.ReadLine()) != null)
        {
            lineNo++;
            if (line.IndexOf('"') >= 0) { Console.Error.WriteLine("line " + lineNo + ": quoted fields unsupported"); return 2; }
            string[] f = line.Split(',');
            string a = f[col[0]], b = f[col[1]], winner = f[col[2]];
            if (winner != "a" && winner != "b") { Console.Error.WriteLine("line " + lineNo + ": winner " + winner); return 2; }
            if (a == b) { selfPlay++; continue; }
            for (int i = 0; i < 8; i++) c[i] = int.Parse(f[col[3 + i]]);
            int ratingA, ratingB;
            if (!ratings.TryGetValue(a, out ratingA)) { ratingA = initial; order.Add(a); }
            if (!ratings.TryGetValue(b, out ratingB)) { ratingB = initial; order.Add(b); }
            SeedPost.CalculateNewRatings(ref ratingA, ref ratingB, winner == "a",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
            ratings[a] = ratingA;
            ratings[b] = ratingB;
        }
        output.Write("#self_play\t" + selfPlay + "\n");
        foreach (string p in order)
        {
            output.Write(p);
            output.Write('\t');
            output.Write(ratings[p]);
            output.Write('\n');
        }
        return 0;
    }
}
