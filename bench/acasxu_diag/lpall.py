# LP-tightened intermediate bounds (layer by layer, triangle relaxation) on dumped open boxes of 3_3 prop_2, then the
# final LP of min max_k g_k (session 10, issue 7). /usr/bin/python3 lpall.py N [BOXES.csv (open33_worst.csv)]
import sys, time, numpy as np, torch
sys.path.insert(0,__import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from scipy.optimize import linprog
from scipy.sparse import lil_matrix
from acas import *; from crown import *
torch.set_num_threads(1)
fwd,sub,layers=load('3_3'); W0,b0=layers[0]; L=[(W0,b0-W0@sub)]+layers[1:]
rows=[[float(v) for v in l.split(',')] for l in open(sys.argv[2] if len(sys.argv)>2 else 'open33_worst.csv') if not l.startswith('#')]
rows=sorted([r for r in rows if r[0]==1],key=lambda r:r[11])[:int(sys.argv[1])]
def build(lo,hi,bnds,upto):
    # variables: x(5), then per layer k<upto: z_k, h_k ; returns A_eq,b_eq,A_ub,b_ub,bounds,index of last z
    nv=5; idx=[]
    for k in range(upto): m=L[k][0].shape[0]; idx.append((nv,nv+m)); nv+=2*m
    m=L[upto][0].shape[0]; zlast=nv; nv+=m
    Aeq=lil_matrix((sum(L[k][0].shape[0] for k in range(upto+1)),nv)); beq=[]; Aub=[]; bub=[]
    vb=[(float(lo[i]),float(hi[i])) for i in range(5)]
    r=0; prev=(0,5)
    for k in range(upto+1):
        w,b=L[k]; w=w.numpy(); b=b.numpy(); m=w.shape[0]
        zs=idx[k][0] if k<upto else zlast
        for i in range(m):
            Aeq[r,zs+i]=1
            for j in range(prev[1]): Aeq[r,prev[0]+j]=-w[i,j]
            beq.append(b[i]); r+=1
        if k==upto: break
        l,u=bnds[k]
        hs=zs+m
        zb=[(float(l[i]),float(u[i])) for i in range(m)]; hb=[]
        for i in range(m):
            li,ui=float(l[i]),float(u[i])
            if li>=0: hb.append((None,None)); Aub.append(({hs+i:1,zs+i:-1},0)); Aub.append(({hs+i:-1,zs+i:1},0))
            elif ui<=0: hb.append((0,0))
            else:
                hb.append((0,None)); Aub.append(({zs+i:1,hs+i:-1},0)); s=ui/(ui-li); Aub.append(({hs+i:1,zs+i:-s},-s*li))
        vb+=zb+hb; prev=(hs,m)
    vb+=[(None,None)]*m
    A=lil_matrix((len(Aub),nv))
    for q,(c,_) in enumerate(Aub):
        for j,v in c.items(): A[q,j]=v
    return Aeq.tocsr(),np.array(beq),A.tocsr(),np.array([v for _,v in Aub]),vb,zlast,nv
C=torch.zeros(4,5,dtype=torch.float64)
for j in range(4): C[j,j+1]=1; C[j,0]=-1
for r in rows:
    lo=torch.tensor(r[1:6],dtype=torch.float64); hi=torch.tensor(r[6:11],dtype=torch.float64)
    bounds,rel=layer_bounds(L,lo[None],hi[None])
    bn=[(b[0][0].clone(),b[1][0].clone()) for b in bounds]
    t0=time.time()
    for k in range(1,len(bn)):
        Aeq,beq,Aub,bub,vb,zl,nv=build(lo,hi,bn,k)
        l,u=bn[k]
        for i in range(len(l)):
            if l[i]>=0 or u[i]<=0: continue
            c=np.zeros(nv); c[zl+i]=1
            a=linprog(c,A_ub=Aub,b_ub=bub,A_eq=Aeq,b_eq=beq,bounds=vb,method='highs'); 
            b_=linprog(-c,A_ub=Aub,b_ub=bub,A_eq=Aeq,b_eq=beq,bounds=vb,method='highs')
            l[i]=max(l[i],a.fun); u[i]=min(u[i],-b_.fun)
    # final LP: min t, t >= g_j
    Aeq,beq,Aub,bub,vb,zl,nv=build(lo,hi,bn,len(L)-1)
    nv2=nv+1; c=np.zeros(nv2); c[-1]=1
    from scipy.sparse import hstack, csr_matrix, vstack
    Aeq2=hstack([Aeq,csr_matrix((Aeq.shape[0],1))]); Aub2=hstack([Aub,csr_matrix((Aub.shape[0],1))])
    G=lil_matrix((4,nv2)); 
    for j in range(4): G[j,zl+j+1]=1; G[j,zl]=-1; G[j,nv]=-1
    res=linprog(c,A_ub=vstack([Aub2,G.tocsr()]),b_ub=np.r_[bub,np.zeros(4)],A_eq=Aeq2,b_eq=beq,bounds=vb+[(None,None)],method='highs')
    unst=[int(((a<0)&(b>0)).sum()) for a,b in bn]
    print('score %.4f LP-all %.5f unstable %s (%.1fs)'%(r[11],res.fun,unst,time.time()-t0),flush=True)
